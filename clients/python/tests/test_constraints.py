"""Constrained sessions from Python: ``create(..., constraints=m)``,
``tell(X, F, constraints_values=G)`` and ``es.best_feasible``, numpy in and
numpy out, against the server of this tree; and the bodies the client
sends (no server)."""

from __future__ import annotations

import math
import unittest

from _support import FakeTransport, Server, fake_client, need

from selfcma import Client, OutOfRange


def problem(x):
    """The sphere with x_0 + 1 ≤ 0 (active at the optimum x = (−1, 0, …),
    f = 1) and Σx² ≤ 4."""
    f = sum(v * v for v in x)
    return f, [x[0] + 1, f - 4]


class AskTransport(FakeTransport):
    """FakeTransport that also answers ask: the x0 shifted by each index."""

    def request(self, method, path, body=None, query=None, **kw):
        if method == "GET" and path.endswith("/ask"):
            self.calls.append((method, path, body, dict(query or {})))
            return {"generation": 0, "candidates": [[v + 0.01 * k for v in self.x0] for k in range(self.population_size)]}
        return super().request(method, path, body, query, **kw)


class BodiesTest(unittest.TestCase):
    def test_create_and_tell_bodies(self):
        t = AskTransport(population_size=3)
        es = fake_client(t).create([0.0, 0.0], 0.5, constraints=2)
        self.assertEqual(t.of("POST", "/v1/sessions")[0][2]["constraints"], {"count": 2})
        X = es.ask()
        # Told in another order: the rows follow their points.
        es.tell(X[::-1], [3.0, 2.0, 1.0], constraints_values=[[3, None], None, [1.0, -1.0]])
        body = t.of("POST", "/tell")[-1][2]
        self.assertEqual(body["fitness"], [1.0, 2.0, 3.0])
        self.assertEqual(body["constraint_values"], [[1.0, -1.0], None, [3.0, None]])

    def test_bad_rows(self):
        t = AskTransport(population_size=3)
        es = fake_client(t).create([0.0, 0.0], 0.5, constraints=1)
        X = es.ask()
        with self.assertRaises(ValueError):
            es.tell(X, [1, 2, 3], constraints_values=[[0], [0]])
        with self.assertRaises(ValueError):
            es.tell(X, [1, 2, 3], constraints_values=[[0], [math.inf], [0]])
        with self.assertRaises(TypeError):
            es.tell(X, [1, 2, 3], constraints_values=[[0], ["x"], [0]])
        es.tell(X, [1, 2, 3], constraints_values=[0.5, -1, float("nan")])  # one constraint: a number a point
        self.assertEqual(t.of("POST", "/tell")[-1][2]["constraint_values"], [[0.5], [-1.0], [None]])


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_numpy_loop_to_the_constrained_optimum(self):
        np = need("numpy")
        es = self.client.create(np.ones(4), 1.0, seed=5, algorithm="cma-es", constraints=2)
        self.assertEqual(es.constraints["count"], 2)
        self.assertIsNone(es.best_feasible.x)
        for _ in range(400):
            X = es.ask()
            F, G = zip(*(problem(x) for x in X))
            es.tell(X, np.array(F), constraints_values=np.array(G))
            if es.best_feasible.f - 1 <= 1e-8:
                break
        b = es.best_feasible
        self.assertLessEqual(b.f - 1, 1e-8)
        self.assertIsInstance(b.x, np.ndarray)
        self.assertIsInstance(b.g, np.ndarray)
        self.assertTrue(np.all(b.g <= 0))
        self.assertEqual(problem(b.x.tolist())[0], b.f)
        self.assertLessEqual(es.best.f, b.f)  # the best f told, feasible or not
        self.assertEqual(len(es.constraints["multipliers"]), 2)
        recs = es.history()
        self.assertIn("violation", recs[-1])

    def test_claims_and_parts(self):
        es = self.client.create([1.0, 1.0, 1.0], 1.0, seed=6, constraints=2, population_size=6)
        X = es.ask()
        F, G = zip(*(problem(x) for x in X))
        self.assertFalse(es.tell_partial(X[:2], F[:2], constraints_values=G[:2]))
        c = es.claim()
        self.assertEqual(c.index, 2)
        self.assertFalse(es.tell_claim(c, F[2], constraints_values=G[2]))
        self.assertTrue(es.tell_partial(X[3:], F[3:], constraints_values=G[3:]))
        self.assertEqual(es.generation, 1)

    def test_refusals(self):
        es = self.client.create([1.0, 1.0], 1.0, constraints=2)
        X = es.ask()
        F = [sum(v * v for v in x) for x in X]
        with self.assertRaises(OutOfRange) as cm:
            es.tell(X, F)
        self.assertIn("constraint_values is required", str(cm.exception))
        with self.assertRaises(OutOfRange) as cm:
            es.tell(X, F, constraints_values=[[0.0]] * len(X))
        self.assertIn("constraint_values[0] has 1 values, want 2", str(cm.exception))
        plain = self.client.create([1.0, 1.0], 1.0)
        X = plain.ask()
        with self.assertRaises(OutOfRange):
            plain.tell(X, F[: len(X)], constraints_values=[[0.0]] * len(X))
        with self.assertRaises(OutOfRange) as cm:
            self.client.create([1.0, 1.0], 1.0, constraints=0)
        self.assertIn("constraints.count", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
