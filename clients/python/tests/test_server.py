"""The client against the real server binary, built from this repository."""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import unittest

from _support import FakeArray, Server, child_env, ellipsoid, quiet_logs, sphere, tls_pair

import selfcma
from selfcma import (
    Client,
    Conflict,
    InvalidRequest,
    NotFound,
    OutOfRange,
    SelfCMAError,
    ServerError,
    ServerUnavailable,
    Stopped,
    TooLarge,
    Unauthorized,
)

N = 10
TARGET = 1e-8


def run_to_end(es, f=ellipsoid, max_generations=5000):
    for _ in range(max_generations):
        if es.stop():
            return es
        X = es.ask()
        es.tell(X, [f(x) for x in X])
    raise AssertionError(f"no stop after {max_generations} generations")


class ServerTestCase(unittest.TestCase):
    """One server for the test case's methods."""

    server_args = ()
    token = None

    @classmethod
    def setUpClass(cls):
        cls.server = Server(token=cls.token, args=cls.server_args).start()
        cls.client = Client(cls.server.url, token=cls.token, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()


class LoopTest(ServerTestCase):
    def test_ellipsoid_to_target(self):
        t = time.monotonic()
        es = self.client.create([1.0] * N, 0.5, seed=11, name="ellipsoid", termination={"target_fitness": TARGET})
        self.assertEqual(es.stop(), {})
        self.assertEqual((es.dimension, es.algorithm, es.seed, es.name), (N, "self-cma-es", 11, "ellipsoid"))  # the server's default algorithm
        run_to_end(es)
        r = es.result
        self.assertLessEqual(r.fbest, TARGET)
        self.assertEqual(set(es.stop()), {"target_fitness"})
        self.assertEqual(r.stop, es.stop())
        self.assertEqual(r.status, "stopped")
        self.assertEqual(r.session_id, es.id)
        self.assertEqual(len(r.xbest), N)
        self.assertAlmostEqual(ellipsoid(r.xbest), r.fbest, delta=1e-15)
        self.assertEqual(r.evaluations, r.generation * es.population_size)
        self.assertIsInstance(r.sigma, float)
        hp = es.hyperparameters
        for k in ("c1", "cmu", "cc", "c_sigma", "d_sigma", "mu_w"):
            self.assertIsInstance(hp[k], float, k)
        hist = es.history()
        self.assertEqual(len(hist), r.generation)
        self.assertEqual([h["generation"] for h in hist], list(range(r.generation)))
        self.assertEqual(hist[-1]["best_so_far"], r.fbest)
        self.assertEqual(hist[-1]["c1"] is not None, True)
        self.assertEqual(es.history(start=r.generation - 2), hist[-2:])
        self.assertEqual(es.history(start=1, limit=1), hist[1:2])
        print(f"[{r.generation} generations, {r.evaluations} evaluations, {time.monotonic() - t:.2f} s] ", end="",
              file=sys.stderr)

    def test_array_inputs(self):
        es = self.client.create(FakeArray([0.5, -0.5, 1.0]), FakeArray(0.3), population_size=FakeArray(6),
                                algorithm="cma-es", seed=FakeArray(5))
        self.assertEqual((es.population_size, es.seed), (6, 5))
        X = es.ask()
        self.assertIsInstance(X, list)
        self.assertTrue(all(type(x) is list and all(type(v) is float for v in x) for x in X))
        es.tell(FakeArray(X), FakeArray([sphere(x) for x in X]))
        self.assertEqual(es.generation, 1)

    def test_tell_checks_the_batch(self):
        es = self.client.create([1.0] * 4, 0.5, algorithm="cma-es", seed=3)
        X = es.ask()
        bad = [list(x) for x in X]
        bad[2][1] += 1e-12
        with self.assertRaisesRegex(ValueError, "not the batch of generation 0"):
            es.tell(bad, [sphere(x) for x in bad])
        with self.assertRaisesRegex(ValueError, "fitness has"):
            es.tell(X, [1.0] * (len(X) - 1))
        with self.assertRaises(ValueError):
            es.tell(X[:-1], [sphere(x) for x in X[:-1]])
        self.assertEqual(es.refresh().generation, 0)  # nothing was told

    def test_permuted_batch_is_told_in_the_server_order(self):
        a = self.client.create([1.0] * 4, 0.5, algorithm="cma-es", seed=7)
        b = self.client.create([1.0] * 4, 0.5, algorithm="cma-es", seed=7)
        for _ in range(3):
            X, Y = a.ask(), b.ask()
            self.assertEqual(X, Y)
            a.tell(X, [sphere(x) for x in X])
            Y = Y[::-1]
            b.tell(Y, [sphere(y) for y in Y])
        self.assertEqual(a.ask(), b.ask())
        self.assertEqual(a.info["mean"], b.refresh().info["mean"])

    def test_ask_is_idempotent_and_attach_tells(self):
        es = self.client.create([1.0] * 3, 0.5, algorithm="cma-es", seed=1)
        X = es.ask()
        self.assertEqual(es.ask(), X)
        other = self.client.session(es.id)
        self.assertEqual(other.ask(), X)
        # A Session that never asked checks X against the server's batch.
        fresh = self.client.session(es.id)
        fresh.tell(X, [sphere(x) for x in X])
        self.assertEqual(fresh.generation, 1)
        # The first object's batch is now stale: the server says so.
        with self.assertRaises(Conflict) as cm:
            es.tell(X, [sphere(x) + 1 for x in X])
        self.assertEqual(cm.exception.generation, 1)
        self.assertNotEqual(es.ask(), X)
        self.assertEqual(es.generation, 1)  # ask saw the advance and refreshed

    def test_ask_after_tell_equals_the_servers_batch(self):
        es = self.client.create([1.0] * 3, 0.5, algorithm="cma-es", seed=6)
        other = self.client.session(es.id)
        for _ in range(5):
            X = es.ask()
            self.assertEqual(X, other.ask())  # other asks the server
            es.tell(X, [sphere(x) for x in X])

    def test_retold_generation_applies_once(self):
        es = self.client.create([1.0] * 3, 0.5, algorithm="cma-es", seed=2)
        X = es.ask()
        y = [sphere(x) for x in X]
        es.tell(X, y)
        first = es.info
        es.tell(X, y)  # a retry: answered as the first time
        self.assertEqual(es.generation, 1)
        self.assertEqual(es.info["mean"], first["mean"])
        with self.assertRaises(Conflict):
            es.tell(X, [v + 1 for v in y])

    def test_failed_evaluations(self):
        es = self.client.create([1.0] * 3, 0.5, algorithm="cma-es", seed=4, population_size=6)
        X = es.ask()
        es.tell(X, [None, float("nan"), float("inf"), 1.0, 2.0, 3.0])
        self.assertEqual(es.result.fbest, 1.0)
        self.assertEqual(es.result.xbest, X[3])
        X = es.ask()
        es.tell(X, [None] * 6)
        self.assertEqual(es.generation, 2)
        with self.assertRaisesRegex(ValueError, "-inf"):
            es.tell(es.ask(), [-math.inf] * 6)

    def test_options(self):
        es = self.client.create([0.0, 0.5], 1.0, bounds=[-1, [1, 2]], restarts=2, seed=9,
                                algorithm="self-cma-es", hyperparameters="uniform", metadata={"lab": "B", "run": FakeArray([1, 2])},
                                termination={"max_evaluations": 1000, "tol_fun": 1e-9})
        info = es.info
        self.assertEqual(info["restarts"]["strategy"], "ipop")
        self.assertEqual(info["restarts"]["max"], 2)
        self.assertEqual(info["metadata"], {"lab": "B", "run": [1, 2]})
        self.assertEqual(es.hyperparameters.get("init"), "uniform")
        self.assertIs(es.hyperparameters.get("snr"), True)  # the server's default
        off = self.client.create([0.0, 0.5], 1.0, algorithm="self-cma-es", hyperparameters={"snr": False})
        self.assertIs(off.hyperparameters.get("snr"), False)
        for x in es.ask():
            self.assertTrue(-1 <= x[0] <= 1 and -1 <= x[1] <= 2, x)
        es2 = self.client.create([0.0, 0.5], 1.0, bounds={"lower": [-1, -1], "upper": [1, 2]}, restarts="none")
        self.assertEqual(es2.info["restarts"]["strategy"], "none")

    def test_sessions_and_delete(self):
        ids = [self.client.create([1.0], 0.5, name=f"s{i}").id for i in range(3)]
        listed = [s["id"] for s in self.client.sessions()]
        for i in ids:
            self.assertIn(i, listed)
        self.assertEqual(len(self.client.sessions(limit=2)), 2)
        self.assertEqual(self.client.health(), {"status": "ok"})
        self.client.session(ids[0]).delete()
        with self.assertRaises(NotFound):
            self.client.session(ids[0])
        self.assertNotIn(ids[0], [s["id"] for s in self.client.sessions()])

    def test_end(self):
        es = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", seed=8)
        X = es.ask()
        es.tell(X, [sphere(x) for x in X])  # the answer carries the next batch
        self.assertIs(es.end(), es)
        self.assertEqual(es.stop(), {"requested": 1})
        with self.assertRaises(Stopped):
            es.ask()
        self.assertEqual(self.client.session(es.id).stop(), {"requested": 1})
        self.assertEqual(es.end().stop(), {"requested": 1})
        self.assertEqual(len(es.history()), 1)

    def test_inject_and_warm_start(self):
        es = self.client.create([1.0, 2.0, 3.0], 0.5, algorithm="cma-es", seed=12, population_size=6)
        X = es.ask()
        p = [0.1 + 0.2, -1 / 3, 5e-324]
        self.assertEqual(es.inject([p]), 1)  # the generation that takes it
        self.assertEqual(es.refresh().info["injected"], {"waiting": 1, "in_batch": 0})
        with self.assertRaisesRegex(OutOfRange, "at most λ = 6"):
            es.inject([[0.0, 0.0, 0.0]] * 6)
        self.assertEqual(es.refresh().info["injected"]["waiting"], 1)  # the refused injection queued nothing
        es.tell(X, [sphere(x) for x in X])
        X = es.ask()
        self.assertEqual(X[0], p)  # as injected, bit for bit
        es.tell(X, [sphere(x) for x in X])
        self.assertEqual([h.get("injected") for h in es.history()], [None, 1])

        # A warm start: the mean of es, its best point first in the first batch.
        ws = self.client.create([0.0, 0.0, 0.0], 0.2, warm_start=es, algorithm="cma-es", seed=3)
        self.assertEqual(ws.mean, es.mean)
        self.assertEqual(ws.ask()[0], es.result.xbest)
        with self.assertRaisesRegex(OutOfRange, "warm_start"):
            self.client.create([0.0], 0.2, warm_start="no-such-session")
        es.end()
        with self.assertRaises(Stopped):
            es.inject([p])

    def test_create_with_idempotency_key(self):
        key = "test-%s" % os.getpid()
        es = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", seed=5, idempotency_key=key)
        X = es.ask()
        es.tell(X, [sphere(x) for x in X])
        # The same create again (a script run again): the same session, as it is now.
        again = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", seed=5, idempotency_key=key)
        self.assertEqual((again.id, again.info["generation"]), (es.id, 1))
        with self.assertRaises(OutOfRange):
            self.client.create([1.0, 2.0], 0.6, algorithm="cma-es", seed=5, idempotency_key=key)
        # Without a key of the caller's, every create makes a session.
        self.assertNotEqual(self.client.create([1.0], 0.5).id, self.client.create([1.0], 0.5).id)

    def test_backup_restores_on_another_server(self):
        es = self.client.create([1.0, 2.0, 3.0], 0.5, seed=11)
        for _ in range(3):
            X = es.ask()
            es.tell(X, [sphere(x) for x in X])
        pending = es.ask()
        restored = Server()
        try:
            path = restored.db
            size = self.client.backup(path)
            self.assertEqual(size, os.path.getsize(path))
            self.assertFalse(os.path.exists(path + ".part"))
            X = es.ask()
            es.tell(X, [sphere(x) for x in X])  # the original goes on
            restored.start()
            other = Client(restored.url, retries=3, backoff=0.05).session(es.id)
            self.assertEqual(other.info["generation"], 3)
            self.assertEqual(other.ask(), pending)
            other.tell(X, [sphere(x) for x in X])
            self.assertEqual(other.ask(), es.ask())
        finally:
            restored.close()


    def test_tell_partial(self):
        es = self.client.create([1.0, 2.0, 3.0], 0.5, algorithm="cma-es", population_size=6, seed=12)
        twin = self.client.create([1.0, 2.0, 3.0], 0.5, algorithm="cma-es", population_size=6, seed=12)
        X = es.ask()
        y = [sphere(x) for x in X]
        y[2] = None  # a failed evaluation
        self.assertFalse(es.tell_partial([X[4], X[2]], [y[4], y[2]]))
        self.assertIsNone(es._next)  # a part that leaves points untold asks no batch back
        self.assertFalse(es.tell_partial([X[2]], [None]))  # again: nothing changes
        self.assertEqual(es.info["partial"], {"indices": [2, 4], "fitness": [None, y[4]]})
        with self.assertRaises(Conflict) as cm:
            es.tell_partial([X[4]], [y[4] + 1])
        self.assertIn("candidate 4 of generation 0", cm.exception.message)
        with self.assertRaises(ValueError):
            es.tell_partial([[9.0, 9.0, 9.0]], [1.0])
        # Another process resumes: what is left to evaluate.
        other = self.client.session(es.id)
        self.assertEqual(other.untold(), [X[i] for i in (0, 1, 3, 5)])
        self.assertTrue(other.tell_partial([X[5], X[0], X[3], X[1]], [y[5], y[0], y[3], y[1]]))
        self.assertEqual(other._next[0], 1)  # the last part brought the next batch
        self.assertEqual((other.generation, other.evaluations, other.info["partial"]), (1, 6, None))
        twin.tell(twin.ask(), y)
        self.assertEqual(other.ask(), twin.ask())
        self.assertEqual(other.untold(), other.ask())

    def test_claims(self):
        es = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=3, seed=14)
        X = es.ask()
        got = [es.claim(lease=60) for _ in range(3)]
        self.assertEqual([(c.generation, c.index, c.x) for c in got], [(0, i, X[i]) for i in range(3)])
        self.assertIsNone(es.claim())  # all leased
        self.assertFalse(es.tell_claim(got[1], sphere(got[1].x)))
        with self.assertRaises(Conflict):
            es.tell_claim(got[1], 5.0)  # told before with another value
        self.assertFalse(es.tell_claim(got[0], float("nan")))  # a failed evaluation
        self.assertTrue(es.tell_claim(got[2], sphere(got[2].x)))
        self.assertEqual((es.generation, es.evaluations), (1, 3))
        with self.assertRaises(TypeError):
            es.claim(lease="an hour")
        # A worker that names itself gets its lease again, renewed.
        mine = es.claim(worker="node-7")
        again = es.claim(worker="node-7")
        self.assertEqual((again.generation, again.index, again.x), (mine.generation, mine.index, mine.x))
        self.assertGreaterEqual(again.expires_at[:19], mine.expires_at[:19])  # to the second: RFC 3339, UTC
        self.assertEqual(es.claim(worker="node-8").index, mine.index + 1)
        with self.assertRaises(InvalidRequest):
            es.claim(worker="node 7")

    def test_tell_and_claim(self):
        # A tell that claims the worker's next point: the value is stored,
        # the next point is the worker's, and the tell that completes the
        # generation claims a point of the next one.
        es = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=3, seed=14)
        X = es.ask()
        c = es.claim(worker="n1")
        for i in (1, 2):
            c = es.tell_and_claim(c, sphere(c.x), lease=30)
            self.assertEqual((c.generation, c.index, c.x, c.worker), (0, i, X[i], "n1"))
            self.assertEqual(es.info["partial"]["indices"], list(range(i)))
            self.assertEqual(es.claim(worker="n1").index, i)  # the worker's lease
        c = es.tell_and_claim(c, sphere(c.x))
        self.assertEqual((es.generation, c.generation, c.index, c.x), (1, 1, 0, es.ask()[0]))
        self.assertEqual(es.history()[0]["best"], min(sphere(x) for x in X))

    def test_worker_renews_its_lease(self):
        # An evaluation of 3.5 s under a lease of 2 s: the worker renews its
        # lease, so no other worker gets its point meanwhile.
        es = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=2, seed=17)
        X = es.ask()

        started = threading.Event()

        def slow(x):
            started.set()
            time.sleep(3.5)
            return sphere(x)

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            w = pool.submit(self.client.work, slow, es.id, lease=2, max_evaluations=1)
            self.assertTrue(started.wait(30))  # the worker holds point 0
            other = es.claim()
            self.assertEqual(other.index, 1)
            time.sleep(2.3)  # the worker's first lease has run out
            self.assertIsNone(es.claim())
            self.assertEqual(w.result(timeout=30), 1)
        self.assertTrue(es.tell_claim(other, sphere(other.x)))
        self.assertEqual(es.history()[0]["best"], min(sphere(x) for x in X))

    def test_worker_failed_evaluations(self):
        es = self.client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=3, seed=18,
                                termination={"max_evaluations": 6})

        def broken(x):
            if x[0] > 1.0:
                raise RuntimeError("simulator crashed")
            return "not a number" if x[1] > 2.0 else sphere(x)

        with self.assertLogs("selfcma", "WARNING") as logs:
            n = self.client.work(broken, es.id, poll=0.01)
        es.refresh()
        self.assertEqual((n, es.status, es.evaluations), (6, "stopped", 6))
        self.assertTrue(any("RuntimeError: simulator crashed" in m or "not a number" in m for m in logs.output), logs.output)

    def test_workers(self):
        # Three workers on one session, as on three nodes: each point is
        # evaluated once, and the run is the one optimize makes.
        opts = dict(algorithm="cma-es", population_size=6, seed=15, termination={"max_evaluations": 40 * 6})
        es = self.client.create([1.0] * 3, 0.5, **opts)
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            done = [pool.submit(self.client.work, sphere, es.id, poll=0.001) for _ in range(3)]
            counts = [d.result(timeout=60) for d in done]
        es.refresh()
        whole = self.client.optimize(sphere, [1.0] * 3, 0.5, workers=1, **opts)
        self.assertEqual(es.status, "stopped")
        self.assertEqual(sum(counts), es.evaluations)
        self.assertEqual((es.generation, es.result.fbest, es.result.xbest), (whole.generation, whole.result.fbest, whole.result.xbest))
        with self.assertRaises(TypeError):
            self.client.work(None, es.id)

    def test_optimize_holds_finished_evaluations(self):
        # Interrupted in the middle of generation 3, with every value told as
        # it finishes: the server holds the 5 finished ones, and the resumed
        # run evaluates only the rest, then goes on as an uninterrupted one.
        lam, count, points = 8, [0], []

        def f(x):
            count[0] += 1
            if count[0] == 3 * lam + 6:
                raise KeyboardInterrupt
            points.append(x)
            return sphere(x)

        opts = dict(algorithm="cma-es", population_size=lam, seed=13, termination={"max_evaluations": 10 * lam})
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(KeyboardInterrupt):
            self.client.optimize(f, [1.0] * 3, 0.5, workers=1, save_interval=0, name="held", **opts)
        sid = [s for s in self.client.sessions() if s["name"] == "held"][-1]["id"]
        es = self.client.session(sid)
        self.assertEqual((es.generation, es.info["partial"]["indices"]), (3, [0, 1, 2, 3, 4]))
        left = es.untold()
        self.assertEqual(left, es.ask()[5:])
        resumed = []
        es = self.client.optimize(lambda x: resumed.append(x) or sphere(x), workers=1, session_id=sid)
        self.assertEqual(resumed[:3], left)
        whole = self.client.optimize(sphere, [1.0] * 3, 0.5, workers=1, **opts)
        self.assertEqual((es.generation, es.result.fbest, es.result.xbest, es.evaluations),
                         (whole.generation, whole.result.fbest, whole.result.xbest, whole.evaluations))


class OptimizeTest(ServerTestCase):
    def test_four_threads(self):
        lock = threading.Lock()
        busy, peak, threads = [0], [0], set()

        def f(x):
            with lock:
                busy[0] += 1
                peak[0] = max(peak[0], busy[0])
                threads.add(threading.get_ident())
            time.sleep(0.0005)
            with lock:
                busy[0] -= 1
            return ellipsoid(x)

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            es = self.client.optimize(f, [1.0] * N, 0.5, workers=4, seed=21, verbose=True,
                                      termination={"target_fitness": TARGET})
        self.assertLessEqual(es.result.fbest, TARGET)
        self.assertEqual(len(threads), 4)
        self.assertGreater(peak[0], 1)
        lines = out.getvalue().splitlines()
        self.assertIn(es.id, lines[0])
        self.assertEqual(lines[1], selfcma.Session.PROGRESS_HEADER)
        self.assertEqual(len(lines), 2 + es.generation + 1)
        last = lines[-2].split()
        self.assertEqual(int(last[0]), es.generation)
        self.assertEqual(int(last[1]), es.evaluations)
        self.assertEqual(float(last[2]), float(f"{es.result.fbest:.5e}"))
        self.assertIn("target_fitness", lines[-1])

        # Same seed, same values: threads change nothing but the time.
        seq = self.client.optimize(ellipsoid, [1.0] * N, 0.5, workers=1, seed=21,
                                   termination={"target_fitness": TARGET})
        self.assertEqual((seq.generation, seq.result.fbest), (es.generation, es.result.fbest))

    def test_processes_and_own_executor(self):
        es = self.client.optimize(sphere, [1.0] * 5, 0.5, executor="processes", workers=2, algorithm="cma-es",
                                  seed=5, termination={"target_fitness": 1e-8})
        self.assertLessEqual(es.result.fbest, 1e-8)
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            es2 = self.client.optimize(sphere, [1.0] * 5, 0.5, executor=pool, algorithm="cma-es", seed=5,
                                       termination={"target_fitness": 1e-8})
            self.assertEqual(pool.submit(sum, [1, 2]).result(), 3)  # left open
        self.assertEqual((es2.generation, es2.result.fbest), (es.generation, es.result.fbest))

    def test_failed_evaluations_are_none(self):
        def f(x):
            if x[0] > 1.2:
                raise RuntimeError("simulator crashed")
            if x[1] > 1.2:
                return float("nan")
            return sphere(x)

        with self.assertLogs("selfcma", "WARNING") as logs:
            es = self.client.optimize(f, [1.0] * 4, 0.5, workers=4, algorithm="cma-es", seed=8,
                                      termination={"target_fitness": 1e-8})
        self.assertLessEqual(es.result.fbest, 1e-8)
        self.assertTrue(any("RuntimeError: simulator crashed" in m for m in logs.output), logs.output)

    def test_keyboard_interrupt_then_resume(self):
        count = [0]
        lock = threading.Lock()

        def f(x):
            with lock:
                count[0] += 1
                if count[0] == 2500:
                    raise KeyboardInterrupt
            return ellipsoid(x)

        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(KeyboardInterrupt):
            self.client.optimize(f, [1.0] * N, 0.5, workers=4, seed=31, termination={"target_fitness": TARGET})
        msg = err.getvalue()
        sid = msg.split("Session ")[1].split()[0]
        self.assertIn(f"client.optimize(f, session_id={sid!r})", msg)
        es = self.client.session(sid)
        self.assertEqual(es.status, "running")
        self.assertEqual(es.generation, (2500 - 1) // es.population_size)  # the interrupted batch was not told

        es = self.client.optimize(ellipsoid, workers=4, session_id=sid)
        self.assertLessEqual(es.result.fbest, TARGET)
        whole = self.client.optimize(ellipsoid, [1.0] * N, 0.5, seed=31, termination={"target_fitness": TARGET})
        self.assertEqual((es.generation, es.result.fbest, es.result.xbest),
                         (whole.generation, whole.result.fbest, whole.result.xbest))

    def test_callback_ends_the_loop(self):
        es = self.client.optimize(sphere, [1.0] * 3, 0.5, workers=1, algorithm="cma-es",
                                  callback=lambda es: es.generation >= 3)
        self.assertEqual((es.generation, es.status), (3, "running"))
        with self.assertRaises(TypeError):
            self.client.optimize(sphere)
        before = len(self.client.sessions())
        with self.assertRaises(ValueError):
            self.client.optimize(sphere, [1.0], 0.5, executor="fibers")
        self.assertEqual(len(self.client.sessions()), before)  # checked before creating one


RESUME_CHILD = textwrap.dedent("""
    import json, sys
    from selfcma import Client
    sys.path.insert(0, sys.argv[3])
    from _support import ellipsoid
    client = Client(sys.argv[1])
    es = client.session(sys.argv[2])
    first = es.ask()
    es = client.optimize(ellipsoid, session_id=sys.argv[2], workers=4)
    r = es.result
    print(json.dumps({"first": first, "generation": r.generation, "fbest": r.fbest, "xbest": r.xbest}))
""")


class ResumeTest(ServerTestCase):
    def test_resume_in_another_process(self):
        es = self.client.create([1.0] * N, 0.5, seed=41, termination={"target_fitness": TARGET})
        for _ in range(25):
            X = es.ask()
            es.tell(X, [ellipsoid(x) for x in X])
        pending = es.ask()  # out for evaluation when this process "dies"
        from _support import TESTS

        p = subprocess.run([sys.executable, "-c", RESUME_CHILD, self.server.url, es.id, str(TESTS)],
                           capture_output=True, text=True, timeout=60, env=child_env())
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(got["first"], pending)
        self.assertLessEqual(got["fbest"], TARGET)

        whole = run_to_end(self.client.create([1.0] * N, 0.5, seed=41, termination={"target_fitness": TARGET}))
        self.assertEqual((got["generation"], got["fbest"], got["xbest"]),
                         (whole.generation, whole.result.fbest, whole.result.xbest))


SIGINT_CHILD = textwrap.dedent("""
    import itertools, signal, sys, time
    from selfcma import Client

    # Python leaves SIGINT ignored when it starts so (a job started in the
    # background by a shell, as a CI runner may): Ctrl-C's handler here.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, sys.argv[2])
    from _support import ellipsoid

    calls = itertools.count()

    # From the 60th evaluation (generation 6) on, a second each: the run
    # cannot end before the test interrupts it, however busy the machine.
    def f(x):
        time.sleep(0.002 if next(calls) < 60 else 1.0)
        return ellipsoid(x)

    Client(sys.argv[1]).optimize(f, [1.0] * 10, 0.5, workers=4, seed=71, name="ctrl-c",
                                 termination={"target_fitness": 1e-8})
""")


class InterruptTest(ServerTestCase):
    def test_ctrl_c_in_another_process_then_resume(self):
        from _support import TESTS

        p = subprocess.Popen([sys.executable, "-c", SIGINT_CHILD, self.server.url, str(TESTS)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                mine = [s for s in self.client.sessions() if s["name"] == "ctrl-c"]
                if mine and mine[0]["generation"] >= 5:
                    break
                time.sleep(0.05)
            else:
                self.fail("the child did not get to generation 5")
            p.send_signal(signal.SIGINT)
            # A deadline for a stuck child on a busy machine, not a measure.
            out, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertNotEqual(p.returncode, 0)
        sid = mine[0]["id"]
        self.assertIn(f"Session {sid} is intact", err)
        self.assertIn(f"client.optimize(f, session_id={sid!r})", err)
        self.assertIn("KeyboardInterrupt", err)

        es = self.client.optimize(ellipsoid, session_id=sid)
        self.assertLessEqual(es.result.fbest, TARGET)
        whole = self.client.optimize(ellipsoid, [1.0] * N, 0.5, seed=71, termination={"target_fitness": TARGET})
        self.assertEqual((es.generation, es.result.fbest, es.result.xbest),
                         (whole.generation, whole.result.fbest, whole.result.xbest))

    def test_two_optimizers_on_one_session(self):
        es = self.client.create([1.0] * N, 0.5, seed=81, termination={"target_fitness": TARGET})
        with quiet_logs(), concurrent.futures.ThreadPoolExecutor(2) as pool:
            # Either may tell a generation the other told first (a warning).
            runs = [pool.submit(self.client.optimize, ellipsoid, session_id=es.id, workers=2) for _ in range(2)]
            got = [r.result(timeout=60) for r in runs]
        whole = self.client.optimize(ellipsoid, [1.0] * N, 0.5, seed=81, termination={"target_fitness": TARGET})
        for g in got:
            self.assertEqual(g.refresh().status, "stopped")
            self.assertEqual((g.generation, g.result.fbest), (whole.generation, whole.result.fbest))

    def test_two_optimizers_telling_parts(self):
        # Every value told as it finishes, by two processes whose objective
        # is noisy: a point both evaluate gets two values, the second a
        # conflict. Both go on from the server's state until the session
        # stops, and every generation is applied once.
        rng = __import__("random").Random(5)
        lock = threading.Lock()

        def noisy(x):
            with lock:
                e = rng.random()
            return sphere(x) * (1 + 1e-3 * e)

        es = self.client.create([1.0] * 4, 0.5, algorithm="cma-es", population_size=8, seed=82,
                                termination={"max_evaluations": 30 * 8})
        with quiet_logs(), concurrent.futures.ThreadPoolExecutor(2) as pool:
            runs = [pool.submit(self.client.optimize, noisy, session_id=es.id, workers=2, save_interval=0)
                    for _ in range(2)]
            got = [r.result(timeout=60) for r in runs]
        es.refresh()
        self.assertEqual((es.status, es.generation, es.evaluations), ("stopped", 30, 240))
        self.assertEqual([r["generation"] for r in es.history()], list(range(30)))
        self.assertTrue(all(g.refresh().generation == 30 for g in got))


class RestartTest(unittest.TestCase):
    """A server of its own, killed and restarted."""

    def setUp(self):
        self.server = Server().start()
        self.addCleanup(self.server.close)

    def test_sigkill_while_a_batch_is_out(self):
        client = Client(self.server.url, retries=2, backoff=0.05)
        es = client.create([1.0] * N, 0.5, seed=51, termination={"target_fitness": TARGET})
        for _ in range(20):
            X = es.ask()
            es.tell(X, [ellipsoid(x) for x in X])
        X = es.ask()
        self.server.kill()
        y = [ellipsoid(x) for x in X]  # evaluated while the server is down
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(ServerUnavailable):
            client.session(es.id)
        self.server.start()
        again = client.session(es.id)
        self.assertEqual(again.generation, 20)
        self.assertEqual(again.ask(), X)  # the same batch comes back
        es.tell(X, y)
        self.assertEqual(es.generation, 21)
        run_to_end(es)
        self.assertLessEqual(es.result.fbest, TARGET)

        whole = run_to_end(client.create([1.0] * N, 0.5, seed=51, termination={"target_fitness": TARGET}))
        self.assertEqual((es.generation, es.result.fbest), (whole.generation, whole.result.fbest))

    def test_claims_across_a_restart(self):
        # A crash of the server (SIGKILL) keeps the values told but may
        # lose the leases (bbolt holds them in memory: a lease write waits
        # for no fsync): the point leased before is handed out again, the
        # same point, which costs an evaluation twice, never a value.
        client = Client(self.server.url, retries=12, backoff=0.05, max_backoff=0.4)
        es = client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=3, seed=16)
        X = es.ask()
        first, second = es.claim(), es.claim()
        self.assertFalse(es.tell_claim(second, sphere(second.x)))
        self.server.kill()
        self.server.start()
        third, fourth = es.claim(), es.claim()
        self.assertEqual((first.index, third.index, third.x, fourth.index), (0, 0, X[0], 2))
        self.assertIsNone(es.claim())  # 1 has its value, 0 and 2 are leased
        for c in (third, fourth):
            es.tell_claim(c, sphere(c.x))
        self.assertEqual((es.generation, es.evaluations), (1, 3))

    def test_leases_kept_by_a_clean_restart(self):
        # A server stopped by SIGTERM writes its leases to the file: the
        # point still leased is not handed out again after the restart.
        client = Client(self.server.url, retries=12, backoff=0.05, max_backoff=0.4)
        es = client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=3, seed=16)
        X = es.ask()
        first, second = es.claim(), es.claim()
        self.assertFalse(es.tell_claim(second, sphere(second.x)))
        self.server.stop()
        self.server.start()
        third = es.claim()
        self.assertEqual((first.index, third.index, third.x), (0, 2, X[2]))
        self.assertIsNone(es.claim())  # the first point's lease runs on

    def test_renewals_across_a_restart(self):
        # Workers renewing by point keep their points across a restart, so
        # a new claim is handed neither.
        client = Client(self.server.url, retries=12, backoff=0.05, max_backoff=0.4)
        es = client.create([1.0, 2.0], 0.5, algorithm="cma-es", population_size=4, seed=17)
        a, b = es.claim(60, "a"), es.claim(60, "b")
        self.assertEqual((a.index, b.index), (0, 1))
        self.server.kill()
        self.server.start()
        renewed = [es.renew(b, 60, "b"), es.renew(a, 60, "a")]
        self.assertEqual([(c.index, c.x) for c in renewed], [(1, b.x), (0, a.x)])
        self.assertEqual(es.claim(60, "c").index, 2)
        with self.assertRaises(Conflict):
            es.renew(a, 60, "c")  # a holds it
        self.assertEqual(es.renew(a, 60).index, 0)  # as the claim's worker, a
        with self.assertRaises(ValueError):
            es.renew(a._replace(worker=None), 60)
        es.tell_claim(a, sphere(a.x))
        with self.assertRaises(Conflict):
            es.renew(a, 60, "a")  # it has its value

    def test_retries_across_a_restart(self):
        client = Client(self.server.url, retries=12, backoff=0.05, max_backoff=0.4)
        es = client.create([1.0] * 4, 0.5, algorithm="cma-es", seed=61)
        X = es.ask()
        self.server.kill()
        restarter = threading.Timer(1.0, self.server.start)
        restarter.start()
        self.addCleanup(restarter.join)
        t = time.monotonic()
        with self.assertLogs("selfcma", "WARNING") as logs:
            es.tell(X, [sphere(x) for x in X])  # retried until the server is back
        self.assertGreaterEqual(time.monotonic() - t, 0.9)
        self.assertEqual(es.generation, 1)
        self.assertTrue(any("retry 1 of 12" in m for m in logs.output), logs.output)
        restarter.join()

        # Down for good: bounded tries, then ServerUnavailable.
        self.server.stop()
        quick = Client(self.server.url, retries=2, backoff=0.01)
        t = time.monotonic()
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(ServerUnavailable) as cm:
            quick.session(es.id).ask()
        self.assertLess(time.monotonic() - t, 2)
        e = cm.exception
        self.assertIsInstance(e, ConnectionError)
        self.assertIsInstance(e, ServerError)
        self.assertIsNone(e.status)
        self.assertEqual(e.method, "GET")
        self.assertIn("no answer after 3 tries", e.message)
        self.assertIsNotNone(e.__cause__)


class TLSTest(unittest.TestCase):
    """A server started with -tls-cert and -tls-key, self-signed."""

    @classmethod
    def setUpClass(cls):
        cls.cert, key = tls_pair()
        cls.server = Server(token="tok", tls=(cls.cert, key)).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_runs_over_https_trusting_the_cafile(self):
        client = Client(self.server.url, token="tok", cafile=self.cert, retries=1, backoff=0.05)
        es = client.create([1.0] * 3, 0.5, algorithm="cma-es", seed=3, termination={"max_evaluations": 70})
        run_to_end(es, f=sphere)
        self.assertEqual(client.session(es.id).result.evaluations, es.result.evaluations)
        self.assertIn("max_evaluations", es.stop())

    def test_untrusted_certificate_is_not_retried(self):
        sleeps = []
        client = Client(self.server.url, token="tok", retries=5)
        client._t._sleep = sleeps.append
        with self.assertRaises(ServerUnavailable) as cm:
            client.health()
        self.assertIn("certificate is not trusted", str(cm.exception))
        self.assertIn("cafile", str(cm.exception))
        self.assertEqual(sleeps, [])

    def test_cafile_needs_https(self):
        with self.assertRaises(ValueError):
            Client("http://127.0.0.1:1", cafile=self.cert)


class ErrorsTest(ServerTestCase):
    """Every error class from a real answer of the server."""

    token = "s3cret"
    server_args = ("-max-body-bytes", "4096")

    def check(self, cm, cls, code, status, method, path):
        e = cm.exception
        self.assertIs(type(e), cls)
        self.assertIsInstance(e, SelfCMAError)
        self.assertEqual((e.code, e.status, e.method), (code, status, method))
        self.assertTrue(e.url.startswith(self.server.url + path), e.url)
        self.assertTrue(e.message)
        self.assertIn(code, str(e))

    def test_invalid(self):
        with self.assertRaises(InvalidRequest) as cm:
            self.client.create([1.0], 0.5, termination={"no_such_criterion": 1})
        self.check(cm, InvalidRequest, "invalid", 400, "POST", "/v1/sessions")
        self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(InvalidRequest) as cm:
            self.client.request("PUT", "/v1/sessions")
        self.check(cm, InvalidRequest, "method_not_allowed", 405, "PUT", "/v1/sessions")

    def test_out_of_range(self):
        with self.assertRaises(OutOfRange) as cm:
            self.client.create([1.0, 2.0], -0.5)
        self.check(cm, OutOfRange, "out_of_range", 422, "POST", "/v1/sessions")
        self.assertIsInstance(cm.exception, ValueError)

    def test_too_large(self):
        with self.assertRaises(TooLarge) as cm:
            self.client.create([1.0] * 2000, 0.5)
        self.check(cm, TooLarge, "too_large", 413, "POST", "/v1/sessions")

    def test_unauthorized(self):
        for token in (None, "wrong"):
            with self.assertRaises(Unauthorized) as cm:
                Client(self.server.url, token=token).sessions()
            self.check(cm, Unauthorized, "unauthorized", 401, "GET", "/v1/sessions")
        self.assertIsInstance(self.client.sessions(), list)  # with the token

    def test_not_found(self):
        with self.assertRaises(NotFound) as cm:
            self.client.session("no-such-session")
        self.check(cm, NotFound, "not_found", 404, "GET", "/v1/sessions/no-such-session")
        self.assertIsInstance(cm.exception, LookupError)

    def test_conflict_and_stopped(self):
        es = self.client.create([1.0, 1.0], 0.5, algorithm="cma-es", population_size=4,
                                termination={"max_evaluations": 8})
        X = es.ask()
        es.tell(X, [sphere(x) for x in X])
        with self.assertRaises(Conflict) as cm:
            es.tell(X, [1.0, 2.0, 3.0, 4.0])
        self.check(cm, Conflict, "conflict", 409, "POST", f"/v1/sessions/{es.id}/tell")
        self.assertEqual(cm.exception.generation, 1)
        X = es.ask()
        es.tell(X, [sphere(x) for x in X])
        self.assertEqual(es.stop(), {"max_evaluations": 8})
        with self.assertRaises(Stopped) as cm:
            es.ask()
        self.check(cm, Stopped, "stopped", 409, "GET", f"/v1/sessions/{es.id}/ask")
        self.assertIsInstance(cm.exception, Conflict)
        self.assertEqual(cm.exception.stop_reasons, {"max_evaluations": 8})
        other = self.client.create([1.0, 1.0], 0.5, population_size=4, termination={"max_evaluations": 4})
        late = self.client.session(other.id)
        Y = late.ask()
        X = other.ask()
        other.tell(X, [sphere(x) for x in X])
        with self.assertRaises(Stopped):  # stopped by another client in between
            late.tell(Y, [1.0, 2.0, 3.0, 4.0])
        self.assertEqual(late.stop(), {"max_evaluations": 4})

    def test_server_unavailable(self):
        # Nothing listens on a port just released by the OS.
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(ServerUnavailable) as cm:
            Client(f"http://127.0.0.1:{port}", retries=1, backoff=0.01).create([1.0], 0.5)
        e = cm.exception
        self.assertIsInstance(e, ServerError)
        self.assertIsInstance(e, ConnectionError)
        self.assertEqual((e.method, e.status, e.code), ("POST", None, None))


if __name__ == "__main__":
    unittest.main()
