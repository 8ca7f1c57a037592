"""selfcma.optuna.SelfCmaSampler on a mixed search space (float, log-float,
int, log-int, stepped float and categorical parameters): the discrete ones
go into the session's integers and categories (CatCMA with margin), with
n_jobs=3 against the real server; mixed=False keeps them independent."""

from __future__ import annotations

import math
import unittest

from _support import FakeTransport, Server, fake_client, need

from selfcma import Client


def setUpModule():
    global optuna, sampler_mod
    optuna = need("optuna")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    import selfcma.optuna as sampler_mod


def objective(trial):
    """A Rosenbrock-like mixed objective: minimum 0 at x = y = 1, n = 2,
    lr = 1e-3, k = 100, s = 0.3, c = "b"."""
    x = trial.suggest_float("x", -2, 2)
    y = trial.suggest_float("y", -2, 2)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    n = trial.suggest_int("n", -5, 5)
    k = trial.suggest_int("k", 1, 1000, log=True)
    s = trial.suggest_float("s", 0, 1, step=0.1)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return ((1 - x) ** 2 + 100 * (y - x * x) ** 2 + (n - 2) ** 2 + (math.log10(lr) + 3) ** 2
            + (math.log10(k) - 2) ** 2 + 10 * (s - 0.3) ** 2 + (c != "b"))


class FakeMixedTest(unittest.TestCase):
    def test_create_body(self):
        t = FakeTransport()
        study = optuna.create_study(sampler=sampler_mod.SelfCmaSampler(fake_client(t), seed=1))
        study.optimize(objective, n_trials=1)
        try:  # the fake server hands out no z and c: only the create is checked
            study.optimize(objective, n_trials=1)
        except Exception:
            pass
        create = t.of("POST", "/v1/sessions")[0][2]
        self.assertEqual(create["algorithm"], "catcma")
        self.assertEqual(create["sigma0"], sampler_mod.MIXED_SIGMA0)
        lo, up = math.log(1e-5), math.log(1e-1)
        self.assertEqual(create["bounds"], {"lower": [lo, -2.0, -2.0], "upper": [up, 2.0, 2.0]})
        ints = create["integers"]  # k (log: its values' logarithms), n, s (sorted by name)
        self.assertEqual(len(ints), 3)
        self.assertEqual(ints[0], [math.log(v) for v in range(1, 1001)])
        self.assertEqual(ints[1], list(range(-5, 6)))
        self.assertEqual(len(ints[2]), 11)
        self.assertEqual(create["categories"], [3])
        self.assertEqual(create["metadata"]["optuna"]["integers"], ["k", "n", "s"])


class LiveMixedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def sessions_of(self, study):
        attrs = study._storage.get_study_system_attrs(study._study_id)
        return [self.client.session(v["id"]) for k, v in attrs.items() if k.startswith(sampler_mod.SESSION_ATTR)]

    def test_mixed_study_with_three_jobs(self):
        sampler = sampler_mod.SelfCmaSampler(self.server.url, seed=7)
        study = optuna.create_study(sampler=sampler, study_name="mixed")
        study.optimize(objective, n_trials=300, n_jobs=3)
        [es] = self.sessions_of(study)
        self.assertEqual((es.algorithm, es.dimension), ("catcma", 7))
        claimed = [t for t in study.get_trials() if sampler_mod.CLAIM_ATTR in t.system_attrs]
        self.assertGreater(len(claimed), 280)
        for t in claimed:  # every parameter is the session's: the discrete ones from the lists
            self.assertIn(t.params["n"], range(-5, 6))
            self.assertIn(t.params["c"], ("a", "b", "c"))
            self.assertAlmostEqual(t.params["s"] * 10, round(t.params["s"] * 10))
        b = study.best_params
        self.assertEqual((b["n"], b["c"]), (2, "b"), study.best_trial)
        self.assertLess(study.best_value, 1.0, b)

    def test_mixed_false_keeps_them_independent(self):
        sampler = sampler_mod.SelfCmaSampler(self.server.url, seed=7, mixed=False)
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=12)
        [es] = self.sessions_of(study)
        self.assertEqual(es.dimension, 4)  # lr, s (rounded to its step), x, y
        self.assertNotEqual(es.algorithm, "catcma")


if __name__ == "__main__":
    unittest.main()
