"""pycma's surface: its options dict, result fields, fmin2, numpy in and
numpy out, and optimize giving up on an objective that always fails."""

from __future__ import annotations

import contextlib
import io
import math
import unittest

from _support import Server, always_fails, fails_on_first_half, need, quiet_logs, returns_none, rosen, sphere

import selfcma
from selfcma import Client, EvaluationError
from selfcma.options import SUPPORTED, UNBOUNDED, to_create
from selfcma.result import StopDict
from selfcma.session import Session


class OptionsTest(unittest.TestCase):
    def test_pycma_names_map_to_the_create_body(self):
        body, local = to_create(
            {"popsize": 20, "seed": 3, "bounds": [0, None], "maxfevals": 1e4, "maxiter": 50, "ftarget": 1e-8,
             "tolfun": 1e-11, "tolx": 0, "tolconditioncov": 1e12, "tolupsigma": float("inf"), "verb_disp": 0},
            2,
        )
        self.assertEqual(body, {
            "population_size": 20, "seed": 3,
            "bounds": {"lower": [0.0, 0.0], "upper": [UNBOUNDED, UNBOUNDED]},
            "termination": {"max_evaluations": 10000, "target_fitness": 1e-8, "tol_fun": 1e-11, "tol_x": 0.0,
                            "condition_cov": 1e12, "tol_up_sigma": 0.0},
        })
        self.assertEqual(local, {"maxiter": 50, "verb_disp": 0})

    def test_pycma_defaults_select_the_servers(self):
        # pycma's own defaults written out: no limit, no target, a seed from
        # the time, no bounds.
        body, local = to_create({"maxfevals": float("inf"), "ftarget": -math.inf, "seed": None,
                                 "bounds": [None, None], "maxiter": "inf"}, 3)
        self.assertEqual((body, local), ({}, {}))

    def test_an_option_without_counterpart_lists_the_supported(self):
        with self.assertRaises(ValueError) as cm:
            to_create({"popsize": 10, "CMA_elitist": True, "CMA_mirrors": False}, 2)
        msg = str(cm.exception)
        self.assertIn("'CMA_elitist', 'CMA_mirrors' have no counterpart", msg)
        for name in SUPPORTED:
            self.assertIn(f"  {name}: ", msg)
        with self.assertRaisesRegex(TypeError, "want a dict"):
            to_create([("popsize", 3)], 2)

    def test_bounds(self):
        self.assertIsNone(to_create({"bounds": None}, 2)[0].get("bounds"))
        b = to_create({"bounds": [[-1, None, 0], 5]}, 3)[0]["bounds"]
        self.assertEqual(b, {"lower": [-1.0, -UNBOUNDED, 0.0], "upper": [5.0, 5.0, 5.0]})
        b = to_create({"bounds": [[-2], [3]]}, 2)[0]["bounds"]  # a one-element list is repeated, as pycma
        self.assertEqual(b, {"lower": [-2.0, -2.0], "upper": [3.0, 3.0]})
        with self.assertRaisesRegex(ValueError, "bounds lower has 2 values, want 3"):
            to_create({"bounds": [[0, 0], 1]}, 3)

    def test_bad_values(self):
        for opts, msg in [({"maxfevals": -1}, "maxfevals"), ({"maxiter": 2.5}, "maxiter"),
                          ({"tolfun": -1e-3}, "tolfun"), ({"ftarget": math.inf}, "ftarget"),
                          ({"seed": "time"}, "seed")]:
            with self.subTest(opts=opts), self.assertRaisesRegex(ValueError, msg):
                to_create(opts, 2)

    def test_stop_dict_answers_pycma_names(self):
        s = StopDict({"target_fitness": 1e-8, "tol_fun": 1e-12})
        self.assertIn("ftarget", s)
        self.assertIn("target_fitness", s)
        self.assertNotIn("tolx", s)
        self.assertEqual((s["tolfun"], s.get("ftarget"), s.get("maxfevals", 7)), (1e-12, 1e-8, 7))
        self.assertEqual(s, {"target_fitness": 1e-8, "tol_fun": 1e-12})

    def test_result_is_pycmas_tuple(self):
        state = {"id": "a", "dimension": 2, "status": "stopped", "generation": 7, "evaluations": 42,
                 "stop_reasons": [{"name": "tol_x", "value": 1e-12}],
                 "best": {"x": [1.0, 2.0], "f": 0.5, "generation": 3}, "mean": [1.5, 2.5], "sigma": 0.1}
        r = Session(None, state).result
        self.assertEqual(r[:8], ([1.0, 2.0], 0.5, None, 42, 7, [1.5, 2.5], None, {"tol_x": 1e-12}))
        self.assertEqual(r._fields[:8], ("xbest", "fbest", "evals_best", "evaluations", "iterations",
                                         "xfavorite", "stds", "stop"))
        self.assertIn("tolx", r.stop)


class PycmaLiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_ported_loop(self):
        # A pycma loop, as written for pycma but for the client's create.
        opts = {"popsize": 12, "seed": 3, "ftarget": 1e-8, "maxfevals": 20000, "verb_disp": 10}
        es = self.client.create([1.0] * 4, 0.5, opts, algorithm="cma-es")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            while not es.stop():
                X = es.ask()
                es.tell(X, [sphere(x) for x in X])
                es.disp()
        self.assertIn("ftarget", es.stop())
        self.assertEqual((es.popsize, es.seed, es.opts), (12, 3, opts))
        r = es.result
        self.assertLessEqual(r.fbest, 1e-8)
        self.assertEqual(r[0], r.xbest)
        self.assertEqual((r.iterations, r.evaluations), (es.countiter, es.countevals))
        self.assertEqual(r.evaluations, 12 * r.iterations)
        # The best point was told in the last generation (the one reaching
        # the target): pycma counts evals_best at the end of its generation.
        self.assertEqual(r.best_generation, r.iterations - 1)
        self.assertEqual(r.evals_best, r.evaluations)
        self.assertEqual(r.xfavorite, es.mean)  # unbounded: the mean itself
        # pycma's stds, σ·√C_ii, from the server: one a coordinate, below
        # σ0 at the end of a converged run.
        self.assertEqual(len(r.stds), 4)
        self.assertTrue(all(0 < s < 0.5 for s in r.stds), r.stds)
        lines = out.getvalue().splitlines()
        # The header, iterations 1, 2, 3, every 10th and the last.
        self.assertEqual(lines[0], Session.PROGRESS_HEADER)
        gens = [int(line.split()[0]) for line in lines if not line.startswith("  gen")]
        want = sorted({1, 2, 3, r.iterations} | set(range(10, r.iterations + 1, 10)))
        self.assertEqual(gens, want)
        # Attached from anywhere, the session has its options.
        again = self.client.session(es.id)
        self.assertEqual(again.opts, opts)
        out = io.StringIO()
        got = again.result_pretty(file=out)
        self.assertEqual(got.fbest, r.fbest)
        text = out.getvalue()
        self.assertIn("termination on target_fitness=", text)
        self.assertIn(f"final/bestever f-value = ", text)
        self.assertIn(f"after {r.evaluations}/{r.evals_best} evaluations", text)
        self.assertIn("incumbent solution: [", text)

    def test_evals_best_of_an_earlier_generation(self):
        es = self.client.create([1.0] * 3, 0.5, {"popsize": 6, "seed": 5}, algorithm="cma-es")
        X = es.ask()
        es.tell(X, [0.0] + [1.0] * 5)  # the best of all at generation 0
        for _ in range(3):
            X = es.ask()
            # Worse, and not flat: two flat generations end a run (pycma's tolflatfitness).
            es.tell(X, [2.0 + 0.1 * k for k in range(6)])
        self.assertEqual((es.result.evals_best, es.result.evaluations, es.result.best_generation), (6, 24, 0))

    def test_maxiter(self):
        es = self.client.create([1.0] * 3, 0.5, {"maxiter": 5, "seed": 1}, algorithm="cma-es")
        n = 0
        while not es.stop():
            X = es.ask()
            es.tell(X, [sphere(x) for x in X])
            n += 1
        self.assertEqual((n, es.stop(), es.status), (5, {"maxiter": 5}, "running"))
        # optimize and fmin2 end the server's session on maxiter.
        es = self.client.optimize(sphere, [1.0] * 3, 0.5, {"maxiter": 4}, workers=1, algorithm="cma-es")
        self.assertEqual((es.countiter, es.status), (4, "stopped"))
        self.assertEqual(es.stop(), {"requested": 4, "maxiter": 4})

    def test_bounds_with_an_open_side(self):
        es = self.client.create([0.5, 0.5], 2.0, {"bounds": [[0, None], [None, 1]], "seed": 2}, algorithm="cma-es")
        seen_low = seen_high = False
        for _ in range(30):
            X = es.ask()
            for x in X:
                self.assertGreaterEqual(x[0], 0.0)
                self.assertLessEqual(x[1], 1.0)
                seen_low |= x[1] < -1.0  # the open sides are open
                seen_high |= x[0] > 2.0
            es.tell(X, [(x[0] + 3) ** 2 + (x[1] - 5) ** 2 for x in X])
        self.assertTrue(seen_low and seen_high)
        r = es.result
        self.assertTrue(0 <= r.xfavorite[0] and r.xfavorite[1] <= 1, r.xfavorite)
        self.assertEqual(list(r.xfavorite), es.info["mean_in_bounds"])  # the server's image of the mean
        self.assertNotEqual(list(r.xfavorite), list(es.info["mean"]))  # the mean itself left the box
        # The optimum on the box is (0, 1), where the bounds hold the points.
        self.assertAlmostEqual(r.xbest[0], 0.0, delta=1e-2)
        self.assertAlmostEqual(r.xbest[1], 1.0, delta=1e-2)

    def test_options_given_twice_or_unknown(self):
        with self.assertRaisesRegex(ValueError, "population_size given both"):
            self.client.create([1.0], 0.5, {"popsize": 10}, population_size=12)
        with self.assertRaisesRegex(ValueError, r"\['target_fitness'\] given both"):
            self.client.create([1.0], 0.5, {"ftarget": 1}, termination={"target_fitness": 2})
        with self.assertRaisesRegex(ValueError, "'CMA_elitist' has no counterpart"):
            self.client.create([1.0], 0.5, {"CMA_elitist": True})
        es = self.client.create([1.0, 1.0], 0.5, 6, algorithm="cma-es")  # the earlier create(x0, sigma0, λ)
        self.assertEqual(es.popsize, 6)

    def test_fmin2(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            xbest, es = self.client.fmin2(sphere, [1.0] * 4, 0.5, {"ftarget": 1e-10, "seed": 1, "verb_disp": 0},
                                          algorithm="cma-es")
        self.assertIsInstance(es, selfcma.Session)
        self.assertEqual(xbest, es.result.xbest)
        self.assertLessEqual(es.result.fbest, 1e-10)
        self.assertIn("termination on target_fitness=", out.getvalue())
        # f(x, *args) as pycma calls it; verbose=-9 prints nothing.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            xbest, es = self.client.fmin2(lambda x, c: sum((v - c) ** 2 for v in x), [0.0] * 3, 0.5,
                                          {"ftarget": 1e-10, "seed": 2, "verbose": -9}, args=(2.0,),
                                          algorithm="cma-es")
        self.assertEqual(out.getvalue(), "")
        for v in xbest:
            self.assertAlmostEqual(v, 2.0, delta=1e-4)

    def test_fmin2_restarts_are_ipop(self):
        with contextlib.redirect_stdout(io.StringIO()):
            _, es = self.client.fmin2(sphere, [1.0] * 2, 0.5, {"seed": 1, "tolfun": 1e-3, "verb_disp": 0},
                                      restarts=2, algorithm="cma-es")
        self.assertEqual(es.info["restarts"]["strategy"], "ipop")
        self.assertEqual(es.info["restarts"]["count"], 2)
        # pycma's incpopsize: λ's factor at each restart, the server's.
        with contextlib.redirect_stdout(io.StringIO()):
            _, es = self.client.fmin2(sphere, [1.0] * 2, 0.5, {"seed": 1, "tolfun": 1e-3, "verb_disp": 0},
                                      restarts=1, incpopsize=3, algorithm="cma-es")
        self.assertEqual((es.info["restarts"]["strategy"], es.info["restarts"]["incpopsize"]), ("ipop", 3))
        self.assertEqual(es.info["restarts"]["count"], 1)


class NumpyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.np = need("numpy")
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_numpy_in_numpy_out(self):
        np = self.np
        es = self.client.create(np.zeros(5), 0.3, {"seed": 4, "popsize": 10}, algorithm="cma-es")
        X = es.ask()
        self.assertEqual(len(X), 10)
        self.assertTrue(all(isinstance(x, np.ndarray) and x.dtype == np.float64 for x in X))
        es.tell(X, [rosen(x) for x in X])  # numpy code that fails on lists
        es.tell(es.ask(), np.array([rosen(x) for x in es.ask()]))  # values as an array too
        r = es.result
        self.assertIsInstance(r.xbest, np.ndarray)
        self.assertIsInstance(r.xfavorite, np.ndarray)
        self.assertEqual(es.countiter, 2)
        # Lists in, lists out: numpy is not forced on anyone.
        es = self.client.create([0.0] * 2, 0.3, algorithm="cma-es")
        self.assertIs(type(es.ask()[0]), list)

    def test_fmin2_on_rosenbrock(self):
        np = self.np
        with contextlib.redirect_stdout(io.StringIO()):
            xbest, es = self.client.fmin2(rosen, np.zeros(4), 0.5, {"ftarget": 1e-10, "seed": 7, "verb_disp": 0},
                                          algorithm="cma-es")
        self.assertIsInstance(xbest, np.ndarray)
        self.assertLessEqual(es.result.fbest, 1e-10)
        self.assertLess(np.max(np.abs(xbest - 1)), 1e-4)


class GiveUpTest(unittest.TestCase):
    """optimize re-raises the objective's exception once every evaluation
    of max_failed_generations generations in a row failed."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def last_session(self):
        return max(self.client.sessions(), key=lambda s: s["created_at"])

    def test_reraises_after_three_generations(self):
        for executor, workers in ((None, 1), ("threads", 3), ("processes", 2)):
            with self.subTest(executor=executor), quiet_logs():
                with self.assertRaisesRegex(ZeroDivisionError, "cannot evaluate 3 coordinates"):
                    self.client.optimize(always_fails, [1.0] * 3, 0.5, workers=workers, executor=executor,
                                         algorithm="cma-es")
                s = self.last_session()
                self.assertEqual((s["generation"], s["status"]), (3, "running"))

    def test_configurable(self):
        with quiet_logs(), self.assertRaises(ZeroDivisionError):
            self.client.optimize(always_fails, [1.0] * 2, 0.5, workers=1, algorithm="cma-es",
                                 max_failed_generations=5)
        self.assertEqual(self.last_session()["generation"], 5)
        with self.assertRaisesRegex(ValueError, "max_failed_generations"):
            self.client.optimize(always_fails, [1.0], 0.5, max_failed_generations=0)
        # None never gives up: the loop ends by another criterion.
        with quiet_logs():
            es = self.client.optimize(always_fails, [1.0] * 2, 0.5, {"maxiter": 6}, workers=1, algorithm="cma-es",
                                      max_failed_generations=None)
        self.assertEqual(es.countiter, 6)

    def test_no_exception_to_reraise(self):
        with quiet_logs(), self.assertRaisesRegex(EvaluationError, "every evaluation failed in 3 generations"):
            self.client.optimize(returns_none, [1.0] * 2, 0.5, workers=2, algorithm="cma-es")

    def test_some_failures_are_not_given_up_on(self):
        with quiet_logs():
            es = self.client.optimize(fails_on_first_half, [0.0] * 3, 1.0, workers=2, algorithm="cma-es", seed=3,
                                      termination={"target_fitness": 1e-8})
        self.assertIn("target_fitness", es.stop())

    def test_fmin2_gives_up_too(self):
        with quiet_logs(), contextlib.redirect_stdout(io.StringIO()), self.assertRaises(ZeroDivisionError):
            self.client.fmin2(always_fails, [1.0] * 2, 0.5, {"verb_disp": 0}, algorithm="cma-es")


if __name__ == "__main__":
    unittest.main()
