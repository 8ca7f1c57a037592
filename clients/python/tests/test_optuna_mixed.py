"""selfcma.optuna.SelfCmaSampler on a mixed search space (float, log-float,
int, log-int, stepped float and categorical parameters): the discrete ones
go into the session's integers and categories (CatCMA with margin), with
n_jobs=3 against the real server; mixed=False keeps them independent; with
a constraints_func, n_jobs=3 and the study resumed by another process."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from _support import TESTS, FakeTransport, Server, child_env, fake_client, need

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


def constrained_objective(trial):
    """objective, with two constraints that cut off its optimum (stored on
    the trial for constraints): x + y + n ≤ 2 (linear, floats and an int;
    4 at the optimum) and lr·k ≤ 0.03 (a log float times a log int; 0.1)."""
    f = objective(trial)
    p = trial.params
    trial.set_user_attr("g", [p["x"] + p["y"] + p["n"] - 2, p["lr"] * p["k"] - 0.03])
    return f


def constraints(trial):
    return trial.user_attrs["g"]


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


    def test_create_body_with_constraints(self):
        t = FakeTransport()
        sampler = sampler_mod.SelfCmaSampler(fake_client(t), seed=1, constraints_func=constraints)
        study = optuna.create_study(sampler=sampler)
        study.optimize(constrained_objective, n_trials=1)
        try:  # as above: only the create is checked
            study.optimize(constrained_objective, n_trials=1)
        except Exception:
            pass
        create = t.of("POST", "/v1/sessions")[0][2]
        self.assertEqual(create["algorithm"], "catcma")
        self.assertEqual(create["constraints"], {"count": 2})
        self.assertEqual(create["sigma0"], sampler_mod.MIXED_CONSTRAINED_SIGMA0)


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

    def test_constrained_three_jobs_resumed_in_another_process(self):
        """Issue 26's Optuna study: float, log-float, int and categorical
        parameters and a constraints_func, n_jobs=3, resumed by another
        process: one mixed constrained session throughout, every claimed
        trial told once, its best feasible point feasible and the best of
        the feasible trials Optuna holds."""
        with tempfile.TemporaryDirectory() as d:
            storage = f"sqlite:///{os.path.join(d, 'study.db')}"
            outs = []
            for _ in range(2):
                p = subprocess.run([sys.executable, "-c", CONSTRAINED_CHILD, self.server.url, storage, str(TESTS)],
                                   capture_output=True, text=True, timeout=600, env=child_env())
                self.assertEqual(p.returncode, 0, p.stderr)
                outs.append(json.loads(p.stdout.strip().splitlines()[-1]))
            study = optuna.load_study(study_name="mixed-constrained", storage=storage)
            [es] = self.sessions_of(study)
            self.assertEqual([o["session"] for o in outs], [es.id, es.id])  # the resume went on with it
            self.assertGreater(outs[1]["generation"], outs[0]["generation"])
            mine = [s for s in self.client.sessions() if s["name"] == "optuna mixed-constrained"]
            self.assertEqual([s["id"] for s in mine], [es.id])
            es.refresh()
            self.assertEqual((es.algorithm, es.dimension, es.constraints["count"]), ("catcma", 7, 2))
            self.assertEqual(len(study.trials), 2 * CONSTRAINED_TRIALS)
            claimed = [t for t in study.trials if sampler_mod.CLAIM_ATTR in t.system_attrs]
            held = len((es.info.get("partial") or {}).get("indices") or [])
            self.assertEqual(es.evaluations + held, len(claimed))  # each told once
            b = es.best_feasible
            self.assertTrue(all(g <= 0 for g in b.g), b)
            feasible = [t for t in claimed if t.state == optuna.trial.TrialState.COMPLETE
                        and all(g <= 0 for g in t.system_attrs["constraints"])]
            best = min(feasible, key=lambda t: t.value)
            self.assertEqual(best.value, b.f)
            self.assertTrue(all(g <= 0 for g in constraints(best)), best)
            self.assertEqual(list(best.system_attrs["constraints"]), constraints(best))
            # Not a random feasible point: f* = 1.127 (n = 2, x = −y = 0.01,
            # lr·k = 0.03, c = "b"; n = 1 gives 1.28).
            self.assertEqual(best.params["c"], "b", best.params)
            self.assertLess(best.value, 3, best.params)

    def test_mixed_false_keeps_them_independent(self):
        sampler = sampler_mod.SelfCmaSampler(self.server.url, seed=7, mixed=False)
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=12)
        [es] = self.sessions_of(study)
        self.assertEqual(es.dimension, 4)  # lr, s (rounded to its step), x, y
        self.assertNotEqual(es.algorithm, "catcma")


CONSTRAINED_TRIALS = 150

CONSTRAINED_CHILD = textwrap.dedent(f"""
    import json, sys
    import optuna
    from selfcma.optuna import SelfCmaSampler
    sys.path.insert(0, sys.argv[3])
    from test_optuna_mixed import constrained_objective, constraints
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = SelfCmaSampler(sys.argv[1], seed=5, constraints_func=constraints)
    study = optuna.create_study(study_name="mixed-constrained", storage=sys.argv[2], sampler=sampler,
                                load_if_exists=True)
    study.optimize(constrained_objective, n_trials={CONSTRAINED_TRIALS}, n_jobs=3)
    attrs = study._storage.get_study_system_attrs(study._study_id)
    sid = [v["id"] for k, v in attrs.items() if k.startswith("selfcma:session:")][0]
    es = sampler.client.session(sid)
    print(json.dumps({{"session": sid, "generation": es.generation}}))
""")


if __name__ == "__main__":
    unittest.main()
