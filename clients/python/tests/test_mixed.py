"""Mixed sessions from Python: ``create(..., integers=, categories=)``,
ask's MixedPoints (x, z, c) told back in any order, whole, in parts and by
claims, numpy x, against the server of this tree."""

from __future__ import annotations

import unittest

from _support import Server, need

from selfcma import Client, MixedPoint, OutOfRange

INTS = [[0, 1, 2, 3], [0.01, 0.1, 1]]


def f(p):
    """Σx² + Σz² + the categories not 0."""
    return sum(v * v for v in p.x) + sum(v * v for v in p.z) + sum(1 for k in p.c if k != 0)


class MixedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_loop_to_the_optimum(self):
        es = self.client.create([2.0, 2.0], None, bounds=[-1, 5], seed=3, integers=INTS, categories=[3, 5])
        self.assertEqual(es.algorithm, "catcma")
        for g in range(400):
            P = es.ask()
            self.assertIsInstance(P[0], MixedPoint)
            for p in P:
                self.assertEqual(len(p.x), 2)
                self.assertTrue(p.z[0] in INTS[0] and p.z[1] in INTS[1])
                self.assertTrue(0 <= p.c[0] < 3 and 0 <= p.c[1] < 5)
            F = [f(p) for p in P]
            if g % 3 == 1:  # in parts, reversed
                half = len(P) // 2
                es.tell_partial(P[:half][::-1], F[:half][::-1])
                es.tell_partial(P[half:], F[half:])
            else:
                es.tell(P[::-1], F[::-1])
            if es.result.fbest - 0.0001 < 1e-8:
                break
        best = es.result.xbest
        self.assertIsInstance(best, MixedPoint)
        self.assertEqual((best.z, best.c), ([0, 0.01], [0, 0]))
        self.assertLess(es.result.fbest, 0.0001 + 1e-8)

    def test_integers_and_categories_only_with_claims(self):
        es = self.client.create(None, None, seed=4, integers=[[-2, -1, 0, 1, 2]], categories=[4])
        c = es.claim(lease=60)
        self.assertEqual((c.x, len(c.z), len(c.c)), ([], 1, 1))
        es.tell_claim(c, c.z[0] ** 2 + c.c[0])
        P = es.ask(2)  # claimed
        es.tell(P, [f(p) for p in P])
        self.assertEqual(es.info["partial"]["indices"].__len__(), 3)

    def test_numpy_x(self):
        np = need("numpy")
        es = self.client.create(np.array([1.0]), 0.5, seed=5, categories=[2])
        P = es.ask()
        self.assertIsInstance(P[0].x, np.ndarray)
        es.tell(P, [float(p.x[0] ** 2 + p.c[0]) for p in P])
        self.assertEqual(es.result.iterations, 1)

    def test_bad_lists(self):
        for ints, cats, field in [([[1, 0]], None, "integers[0][1]"), ([[1]], None, "integers[0]"), (None, [1], "categories[0]")]:
            with self.assertRaises(OutOfRange) as e:
                self.client.create(None, None, integers=ints, categories=cats)
            self.assertIn(field, str(e.exception))


if __name__ == "__main__":
    unittest.main()
