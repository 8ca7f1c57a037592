"""pycma's attributes and arguments that a ported script uses (the users'
issue, items 3, 4 and 6, and the new options of the quality issue): the
request bodies the client builds (no server), then the same against the
server of this tree, and failover between several servers."""

from __future__ import annotations

import contextlib
import io
import math
import os
import pickle
import socket
import unittest
import warnings
from unittest import mock

from _support import FakeTransport, Server, fake_client, need, quiet_logs, rosen, sphere
from test_unit import SESSION, UNAVAILABLE, Stub

import selfcma
from selfcma import Client, Unsupported
from selfcma.options import IGNORED, restarts_body
from selfcma.session import NUMPY_KEY, Session


class _Made(Exception):
    """Raised by a recording create: fmin2 stops there."""


def recording(client):
    """client whose create records its arguments and raises _Made."""
    made = []

    def create(x0, sigma0, inopts=None, **kw):
        made.append(dict(kw, x0=x0, sigma0=sigma0, inopts=inopts))
        raise _Made

    client.create = create
    return made


class BodiesTest(unittest.TestCase):
    """What create and fmin2 send for pycma's names (no server)."""

    def create_body(self, *args, **kw):
        t = FakeTransport()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fake_client(t).create(*args, **kw)
        return t.of("POST", "/v1/sessions")[0][2]

    def test_cma_active(self):
        self.assertIs(self.create_body([0.0], 1.0, {"CMA_active": True})["active"], True)
        self.assertIs(self.create_body([0.0], 1.0, {"CMA_active": False})["active"], False)
        self.assertIs(self.create_body([0.0], 1.0, {"CMA_active": "False  # pycma's string form"})["active"], False)
        self.assertIs(self.create_body([0.0], 1.0, {"CMA_active": 1})["active"], True)
        self.assertIs(self.create_body([0.0], 1.0, active=False)["active"], False)
        # Not given: not sent, so that a server without the field is asked
        # what it was asked before.
        self.assertNotIn("active", self.create_body([0.0], 1.0, {"popsize": 5}))
        self.assertNotIn("active", self.create_body([0.0], 1.0))
        with self.assertRaisesRegex(ValueError, "active given both"):
            self.create_body([0.0], 1.0, {"CMA_active": True}, active=True)
        with self.assertRaisesRegex(ValueError, "CMA_active"):
            self.create_body([0.0], 1.0, {"CMA_active": "maybe"})

    def test_mirrored(self):
        self.assertIs(self.create_body([0.0], 1.0, mirrored=True)["mirrored"], True)
        self.assertIs(self.create_body([0.0], 1.0, mirrored=False)["mirrored"], False)
        # Not given: not sent (the server's default).
        self.assertNotIn("mirrored", self.create_body([0.0], 1.0))
        with self.assertRaisesRegex(TypeError, "mirrored"):
            self.create_body([0.0], 1.0, mirrored=1)

    def test_mean_rate(self):
        self.assertIs(self.create_body([0.0], 1.0, mean_rate=True)["mean_rate"], True)
        self.assertIs(self.create_body([0.0], 1.0, mean_rate=False)["mean_rate"], False)
        self.assertNotIn("mean_rate", self.create_body([0.0], 1.0))
        with self.assertRaises(TypeError):
            self.create_body([0.0], 1.0, mean_rate=1)

    def test_cma_diagonal(self):
        # pycma's CMA_diagonal=True is the service's sep-CMA-ES.
        self.assertEqual(self.create_body([0.0], 1.0, {"CMA_diagonal": True})["algorithm"], "sep-cma-es")
        self.assertEqual(self.create_body([0.0], 1.0, {"CMA_diagonal": "True"})["algorithm"], "sep-cma-es")
        self.assertNotIn("algorithm", self.create_body([0.0], 1.0, {"CMA_diagonal": False}))
        self.assertEqual(self.create_body([0.0], 1.0, {"CMA_diagonal": False}, algorithm="cma-es")["algorithm"], "cma-es")
        with self.assertRaisesRegex(ValueError, "algorithm given both"):
            self.create_body([0.0], 1.0, {"CMA_diagonal": True}, algorithm="cma-es")
        with self.assertRaisesRegex(ValueError, "diagonal phase"):
            self.create_body([0.0], 1.0, {"CMA_diagonal": 100})

    def test_restarts(self):
        cases = [
            (dict(), None),
            (dict(restarts=3), {"strategy": "ipop", "max": 3}),  # as before
            (dict(restarts=0), {"max": 0}),  # one run (max 0 without a strategy: none)
            (dict(restarts=0, bipop=True, incpopsize=3), {"max": 0}),  # pycma: bipop needs restarts
            (dict(restarts="ipop"), {"strategy": "ipop"}),
            (dict(restarts=3, bipop=True), {"strategy": "bipop", "max": 3}),
            (dict(bipop=True), {"strategy": "bipop"}),
            (dict(restarts=3, incpopsize=3), {"strategy": "ipop", "max": 3, "incpopsize": 3.0}),
            (dict(restarts=3, incpopsize=2), {"strategy": "ipop", "max": 3}),  # pycma's default: not sent
            (dict(restarts=2, bipop=True, incpopsize=1.5), {"strategy": "bipop", "max": 2, "incpopsize": 1.5}),
            (dict(restarts={"strategy": "bipop", "max": 4, "point": "uniform", "region": [-5, [5, 6]]}),
             {"strategy": "bipop", "max": 4, "point": "uniform",
              "region": {"lower": [-5.0, -5.0], "upper": [5.0, 6.0]}}),
            (dict(restarts={"strategy": "ipop"}, bipop=True), {"strategy": "bipop"}),
            (dict(restarts="nbipop"), {"strategy": "nbipop"}),  # Loshchilov's, not pycma's
            (dict(restarts="nipop", bipop=True), {"strategy": "nbipop"}),
            (dict(restarts={"strategy": "nbipop", "max": 4}, bipop=True), {"strategy": "nbipop", "max": 4}),
        ]
        for kw, want in cases:
            with self.subTest(kw=kw):
                body = self.create_body([0.0, 0.0], 1.0, **kw)
                self.assertEqual(body.get("restarts"), want)
                self.assertEqual(restarts_body(kw.get("restarts"), kw.get("bipop", False), kw.get("incpopsize"), 2),
                                 want)
        for kw, exc, msg in [(dict(incpopsize=3), ValueError, "without restarts"),
                             (dict(restarts=-1), ValueError, "≥ 0"),
                             (dict(restarts="random"), ValueError, "none, ipop, bipop"),
                             (dict(restarts={"strategy": "none"}, bipop=True), ValueError, "BIPOP"),
                             (dict(restarts=1, bipop="yes"), TypeError, "bipop")]:
            with self.subTest(kw=kw), self.assertRaisesRegex(exc, msg):
                self.create_body([0.0, 0.0], 1.0, **kw)

    def test_fmin2_passes_restarts_bipop_incpopsize(self):
        c = fake_client(FakeTransport())
        made = recording(c)
        calls = [
            (dict(restarts=2, bipop=True, incpopsize=3), dict(restarts=2, bipop=True, incpopsize=3)),
            (dict(restarts=2), dict(restarts=2)),
            (dict(restarts={"maxrestarts": 4}), dict(restarts=4)),
            (dict(), dict(restarts=0)),  # pycma's default: one run
            (dict(restarts=None), dict()),  # the server's default restarts
            (dict(restarts=None, bipop=True, incpopsize=3), dict(bipop=True, restarts={"incpopsize": 3})),
        ]
        for kw, want in calls:
            with self.subTest(kw=kw), self.assertRaises(_Made):
                c.fmin2(sphere, [1.0, 1.0], 0.5, {"verbose": -9}, **kw)
            got = {k: v for k, v in made[-1].items() if k in ("restarts", "bipop", "incpopsize")}
            self.assertEqual(got, want)
        # pycma's positional order: f, x0, sigma0, options, args, gradf, restarts.
        with self.assertRaises(_Made):
            c.fmin2(sphere, [1.0], 0.5, None, (), None, 5)
        self.assertEqual(made[-1]["restarts"], 5)
        # bipop without restarts makes no restart, as in pycma: said once.
        with self.assertLogs("selfcma", "WARNING") as logs, self.assertRaises(_Made):
            c.fmin2(sphere, [1.0], 0.5, bipop=True)
        self.assertEqual((made[-1]["restarts"], "bipop" in made[-1]), (0, False))
        self.assertIn("restarts=0 makes no restart", logs.output[0])

    def test_fmin2_without_counterpart(self):
        t = FakeTransport()
        c = fake_client(t)
        with self.assertRaises(Unsupported) as cm:
            c.fmin2(sphere, [1.0, 1.0], 0.5, noise_handler=True)
        msg = str(cm.exception)
        self.assertIn("no noise handling", msg)
        self.assertIn("popsize", msg)
        self.assertIn("mean of several evaluations", msg)
        self.assertIsInstance(cm.exception, NotImplementedError)
        for kw in (dict(gradf=lambda x: x), dict(parallel_objective=lambda X: X), dict(restart_from_best=True),
                   dict(eval_initial_x=True)):
            with self.subTest(kw=list(kw)), self.assertRaises(Unsupported):
                c.fmin2(sphere, [1.0, 1.0], 0.5, **kw)
        self.assertEqual(t.calls, [])  # refused before any request

    def test_logging_options_are_ignored_with_one_warning(self):
        t = FakeTransport()
        opts = {"popsize": 4, "verb_log": 0, "verb_time": 0, "verb_plot": 0, "verb_filenameprefix": "outcmaes/",
                "verb_append": 0, "verb_log_expensive": 0, "verb_disp_overwrite": 10, "verb_disp": 0}
        self.assertEqual(set(opts) - {"popsize", "verb_disp"}, set(IGNORED))
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            es = fake_client(t).create([0.0, 0.0], 1.0, opts)
        self.assertEqual(len(got), 1, [str(w.message) for w in got])
        self.assertIn("ignores pycma's logging options verb_append, verb_disp_overwrite, verb_filenameprefix, "
                      "verb_log, verb_log_expensive, verb_plot, verb_time", str(got[0].message))
        self.assertEqual(got[0].filename, __file__)  # points at the caller's line
        body = t.of("POST", "/v1/sessions")[0][2]
        self.assertEqual(set(body) - {"metadata"}, {"x0", "sigma0", "population_size"})
        self.assertEqual(es.opts, opts)  # kept, as every option
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            fake_client(FakeTransport()).create([0.0], 1.0, {"popsize": 4, "verb_disp": 0})
        self.assertEqual(got, [])

    def test_numpy_is_remembered(self):
        np = need("numpy")
        t = FakeTransport()
        c = fake_client(t)
        es = c.create(np.zeros(2), 1.0)
        self.assertEqual(t.of("POST", "/v1/sessions")[0][2]["metadata"], {NUMPY_KEY: True})
        self.assertIsInstance(es.mean, np.ndarray)
        again = c.session(es.id)  # by id: as it was created
        self.assertIsInstance(again.mean, np.ndarray)
        self.assertIs(type(c.session(es.id, numpy=False).mean), list)
        # A list x0: no marker, lists out.
        es = c.create([0.0, 0.0], 1.0)
        self.assertIsNone(t.of("POST", "/v1/sessions")[1][2].get("metadata"))
        self.assertIs(type(c.session(es.id).mean), list)
        self.assertIsInstance(c.session(es.id, numpy=True).mean, np.ndarray)

    def test_sigma_setter_and_C_say_why_not(self):
        t = FakeTransport()
        es = fake_client(t).create([0.0, 0.0], 0.5)
        n = len(t.calls)
        with self.assertRaises(Unsupported) as cm:
            es.sigma *= 0.5
        self.assertIn("warm_start", str(cm.exception))
        self.assertIn("does not change σ of a running session", str(cm.exception))
        self.assertEqual(es.sigma, 0.5)
        self.assertEqual(len(t.calls), n)
        # A server older than /covariance.
        with self.assertRaises(Unsupported) as cm:
            es.C
        self.assertIn("does not send the covariance matrix", str(cm.exception))
        self.assertIn("es.stds", str(cm.exception))

    def test_best(self):
        state = dict(SESSION, best={"x": [1.0, 2.0], "f": 0.25, "generation": 0})
        b = Session(None, state).best
        self.assertEqual((b.x, b.f, b.evals), ([1.0, 2.0], 0.25, None))
        self.assertEqual(b.get(), ([1.0, 2.0], 0.25, None))
        b = Session(None, SESSION).best
        self.assertEqual((b.x, b.f), (None, math.inf))

    def test_ask_number_claims_and_tell_is_a_part(self):
        t = FakeTransport(population_size=6)
        es = fake_client(t).create([0.0, 0.0], 0.5)
        X = es.ask(3)
        self.assertEqual(len(X), 3)
        claims = t.of("POST", "/claim")
        workers = [q["worker"] for _, _, _, q in claims]
        self.assertEqual(len(set(workers)), 3)  # one worker id a claim: a retried claim leases nothing more
        es.tell(X[::-1], [3.0, 2.0, 1.0])
        self.assertEqual(t.of("POST", "/tell")[-1][2], {"generation": 0, "indices": [2, 1, 0], "fitness": [3.0, 2.0, 1.0]})
        with self.assertRaises(Unsupported):
            es.ask(2, xmean=[0.0, 0.0])

    def test_logger(self):
        t = FakeTransport()
        es = fake_client(t).create([0.0, 0.0], 0.5)
        es._state["links"] = {"ui": "/ui/sessions/s1"}
        self.assertIs(es.logger.add(), es.logger)
        out = io.StringIO()
        with mock.patch("webbrowser.open") as opened:
            self.assertEqual(es.logger.plot(open=False, file=out), "http://fake/ui/sessions/s1")
            opened.assert_not_called()
            with mock.patch.dict(os.environ, {"DISPLAY": ""}), contextlib.redirect_stdout(io.StringIO()) as so:
                es.plot()
            if os.uname().sysname == "Linux":
                opened.assert_not_called()  # no display: printed only
            self.assertIn("http://fake/ui/sessions/s1", so.getvalue())
            opened.return_value = True
            es.logger.plot(open=True, file=out)
            opened.assert_called_once_with("http://fake/ui/sessions/s1")
        self.assertEqual(out.getvalue().splitlines(),
                         ["session s1: http://fake/ui/sessions/s1", "session s1: opened http://fake/ui/sessions/s1"])


class PickleTest(unittest.TestCase):
    def test_session_pickles_as_id_and_urls(self):
        s = Stub([(200, SESSION)])
        self.addCleanup(s.close)
        other = "http://127.0.0.1:9"
        c = Client([s.url, other], token="secret-token", retries=1)
        es = Session(c, dict(SESSION), numpy=False)
        data = pickle.dumps(es)
        self.assertNotIn(b"secret-token", data)
        self.assertNotIn(b"hyperparameters", data)  # not the state: the id
        with mock.patch.dict(os.environ, {"SELFCMA_TOKEN": "env-token"}):
            again = pickle.loads(data)
        self.assertEqual((again.id, again._client.urls), ("abc", [s.url, other]))
        self.assertEqual(again._client._t.retries, 1)
        method, path, headers, _ = s.requests[-1]
        self.assertEqual((method, path, headers.get("Authorization")), ("GET", "/v1/sessions/abc", "Bearer env-token"))
        c2 = pickle.loads(pickle.dumps(c))
        self.assertEqual(c2.urls, c.urls)


class FailoverTest(unittest.TestCase):
    """Client([url1, url2]): the next server at once on no answer or 503, and
    a session stays on the server that answers."""

    def stub(self, *script):
        s = Stub(script)
        self.addCleanup(s.close)
        return s

    def client(self, urls, **kw):
        c = Client(urls, **kw)
        self.sleeps = []
        c._t._sleep = self.sleeps.append
        return c

    @staticmethod
    def dead_url():
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return "http://127.0.0.1:%d" % sock.getsockname()[1]

    def test_urls(self):
        c = Client("127.0.0.1:1, http://127.0.0.1:2/")
        self.assertEqual(c.urls, ["http://127.0.0.1:1", "http://127.0.0.1:2"])
        self.assertEqual(c.url, "http://127.0.0.1:1")
        self.assertEqual(repr(c), "<selfcma.Client http://127.0.0.1:1 http://127.0.0.1:2>")
        self.assertEqual(Client(("a:1", "b:2")).urls, ["http://a:1", "http://b:2"])
        with self.assertRaises(ValueError):
            Client(["http://a:1", "ftp://b"])
        with self.assertRaises(TypeError):
            Client(["http://a:1", 2])
        with self.assertRaisesRegex(ValueError, "https:// only"):
            Client(["https://a:1", "http://b:2"], cafile="ca.pem")

    def test_503_and_refused_fail_over_at_once(self):
        a = self.stub(UNAVAILABLE)
        b = self.stub((200, SESSION), (200, dict(SESSION, generation=1)))
        dead = self.dead_url()
        c = self.client([dead, a.url, b.url], retries=2)
        with self.assertLogs("selfcma", "WARNING") as logs:
            es = c.session("abc")
        self.assertEqual((len(a.requests), len(b.requests), self.sleeps), (1, 1, []))
        self.assertEqual(len(logs.output), 2)
        self.assertIn(f"trying {b.url}", logs.output[1])
        # The session stays on b, and new sessions start there.
        es.refresh()
        self.assertEqual((len(a.requests), len(b.requests), es.generation), (1, 2, 1))
        self.assertEqual(c.url, b.url)

    def test_a_session_stays_while_its_server_answers(self):
        a = self.stub((200, SESSION))
        b = self.stub((200, SESSION))
        c = self.client([a.url, b.url])
        es = c.session("abc")
        for _ in range(3):
            es.refresh()
        self.assertEqual((len(a.requests), len(b.requests)), (4, 0))

    def test_all_down_is_rounds_of_retries(self):
        a = self.stub(UNAVAILABLE)
        b = self.stub(UNAVAILABLE)
        c = self.client([a.url, b.url], retries=2)
        with quiet_logs(), self.assertRaises(selfcma.ServerUnavailable) as cm:
            c.session("abc")
        self.assertEqual((len(a.requests), len(b.requests), len(self.sleeps)), (3, 3, 2))
        self.assertIn("no answer after 3 rounds of 2 servers", str(cm.exception))

    def test_throttled_is_not_failed_over(self):
        a = self.stub((429, {"error": {"code": "throttled", "message": "slow down"}}, {"Retry-After": "0"}),
                      (200, SESSION))
        b = self.stub((200, SESSION))
        c = self.client([a.url, b.url])
        with quiet_logs():
            c.session("abc")
        self.assertEqual((len(a.requests), len(b.requests)), (2, 0))

    def test_not_idempotent_fails_over_only_when_refused(self):
        a = self.stub(UNAVAILABLE)
        b = self.stub((200, {"queued": 1, "generation": 1, "waiting": 1}))
        c = self.client([a.url, b.url])
        with self.assertRaises(selfcma.ServerUnavailable):
            c.request("POST", "/v1/sessions/abc/inject", {"points": [[0, 0]]}, idempotent=False)
        self.assertEqual((len(a.requests), len(b.requests)), (1, 0))
        c = self.client([self.dead_url(), b.url])
        with quiet_logs():
            c.request("POST", "/v1/sessions/abc/inject", {"points": [[0, 0]]}, idempotent=False)
        self.assertEqual(len(b.requests), 1)


def skip_unless_server_takes(test, err, field):
    """Skips test when err is the server's refusal of a field it does not
    have yet (another branch adds them), outside CI; else re-raises."""
    msg = getattr(err, "message", "")
    lacks = (f'unknown field "{field}"' in msg
             or (field == "bipop" and 'restarts.strategy "bipop", want "none" or "ipop"' in msg))
    if not lacks or os.environ.get("CI"):
        raise err
    test.skipTest(f"the server of this tree does not take {field} yet: {err}")


class SurfaceLiveTest(unittest.TestCase):
    """The same against the server of this tree."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.client = Client(cls.server.url, retries=3, backoff=0.05)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_ask_number(self):
        es = self.client.create([1.0] * 3, 0.5, {"popsize": 6, "seed": 2}, algorithm="cma-es")
        X = es.ask(4)
        Y = es.ask(4)  # two are left without a lease
        self.assertEqual((len(X), len(Y)), (4, 2))
        batch = es.ask()
        self.assertEqual(sorted(map(tuple, X + Y)), sorted(map(tuple, batch)))
        es.tell(Y, [sphere(y) for y in Y])
        self.assertEqual((es.generation, es.info["partial"]["indices"]), (0, [4, 5]))
        es.tell(X, [sphere(x) for x in X])
        self.assertEqual((es.generation, es.evaluations), (1, 6))
        Z = es.ask(6)
        with self.assertRaisesRegex(ValueError, "6 of them to this Session's earlier asks"):
            es.ask(1)
        es.tell(Z, [sphere(z) for z in Z])
        self.assertEqual(es.generation, 2)
        # Points leased to another worker: ask waits until a lease runs out.
        other = self.client.session(es.id)
        held = other.ask(6, lease=1)
        self.assertEqual(len(held), 6)
        got = es.ask(2)
        self.assertEqual(len(got), 2)
        self.assertTrue(all(any(list(g) == list(h) for h in held) for g in got))
        es.tell(got, [sphere(g) for g in got])
        rest = [h for h in held if not any(list(g) == list(h) for g in got)]
        other.tell(rest, [sphere(h) for h in rest])
        self.assertEqual(self.client.session(es.id).generation, 3)
        es.refresh()
        # ask_and_eval with a number, and pycma's tell(*ask_and_eval(f)).
        es.tell(*es.ask_and_eval(sphere, number=6))
        es.tell(*es.ask_and_eval(sphere, evaluations=3))
        self.assertEqual(es.generation, 5)

    def test_cma_diagonal(self):
        """pycma's CMA_diagonal=True runs a sep-cma-es session: it solves
        the sphere, its C is diagonal, and above 200 coordinates es.C says
        what there is instead."""
        es = self.client.create([1.0] * 10, 0.5, {"CMA_diagonal": True, "seed": 5, "ftarget": 1e-8, "verbose": -9})
        self.assertEqual(es.algorithm, "sep-cma-es")
        C = es.C
        self.assertTrue(all(C[i][j] == 0 for i in range(10) for j in range(10) if i != j))
        es.optimize(sphere)
        self.assertLessEqual(es.best.f, 1e-8)
        big = self.client.create([0.0] * 201, 1.0, {"CMA_diagonal": True})
        with self.assertRaisesRegex(Unsupported, "diagonal"):
            big.C

    def test_C(self):
        """es.C is the server's C: σ·√C_ii are the stds; numpy in, numpy
        out; a session of more than 200 coordinates raises Unsupported."""
        np = need("numpy")
        for alg in ("cma-es", "self-cma-es"):
            with self.subTest(algorithm=alg):
                es = self.client.create(np.ones(4), 0.5, {"seed": 3}, algorithm=alg)
                for _ in range(10):
                    X = es.ask()
                    es.tell(X, [sphere(x) for x in X])
                C = es.C
                self.assertEqual((type(C), C.shape), (np.ndarray, (4, 4)))
                np.testing.assert_array_equal(C, C.T)
                self.assertGreater(min(np.linalg.eigvalsh(C)), 0)
                np.testing.assert_allclose(es.sigma * np.sqrt(np.diag(C)), es.stds, rtol=1e-14)
                self.assertNotEqual(C[0, 1], 0)
        plain = self.client.session(es.id, numpy=False).C
        self.assertEqual((type(plain), len(plain), type(plain[0])), (list, 4, list))
        big = self.client.create([0.0] * 201, 1.0)
        with self.assertRaisesRegex(Unsupported, "es.C: .*201 coordinates.*stds"):
            big.C

    def test_optimize(self):
        es = self.client.create([1.0] * 3, 0.5, {"popsize": 6, "seed": 2, "verb_disp": 0}, algorithm="cma-es")
        seen = []
        self.assertIs(es.optimize(sphere, iterations=4, callback=seen.append), es)
        self.assertEqual((es.countiter, len(seen), seen[0]), (4, 4, es))
        es.optimize(sphere, maxfun=20)  # whole iterations until 20 more evaluations
        self.assertEqual(es.countevals, 24 + 24)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            es.optimize(sphere, verb_disp=1000)
        self.assertIn("termination by", out.getvalue())
        self.assertTrue(es.stop())
        self.assertIn("solution =", out.getvalue())

    def test_numpy_by_id_and_pickle(self):
        np = need("numpy")
        es = self.client.create(np.ones(3), 0.5, {"popsize": 6, "seed": 4}, algorithm="cma-es")
        es.tell(es.ask(), [1.0] * 6)
        again = self.client.session(es.id)
        self.assertIsInstance(again.ask()[0], np.ndarray)
        r = again.result
        for v in (again.mean, again.stds, again.best.x, r.xbest, r.xfavorite, r.stds, r.mean):
            self.assertIsInstance(v, np.ndarray)
        X = again.ask()
        restored = pickle.loads(pickle.dumps(again))  # mid-generation
        restored.tell(X, [sphere(x) for x in X])
        self.assertEqual(restored.generation, 2)
        self.assertIsInstance(restored.mean, np.ndarray)
        # A worker of the session evaluates numpy arrays too.
        kinds = []
        self.assertEqual(self.client.work(lambda x: kinds.append(type(x)) or rosen(x), es.id, max_evaluations=6), 6)
        self.assertEqual(kinds, [np.ndarray] * 6)

    def test_sigma_and_overall_step(self):
        es = self.client.create([1.0] * 4, 0.3, {"popsize": 8, "seed": 1}, algorithm="cma-es")
        self.assertEqual(es.overall_step, es.sigma)  # C = I at the start
        for _ in range(5):
            X = es.ask()
            es.tell(X, [sum((i + 1) * v * v for i, v in enumerate(x)) for x in X])
        rec = es.history()[-1]
        self.assertEqual(es.overall_step, rec["overall_step"])
        self.assertAlmostEqual(es.overall_step, es.sigma * rec["axis_lengths"][-1], delta=1e-12 * es.overall_step)
        self.assertGreaterEqual(es.overall_step, max(es.stds) * (1 - 1e-12))

    def test_best(self):
        es = self.client.create([1.0] * 2, 0.5, {"popsize": 4, "seed": 1}, algorithm="cma-es")
        self.assertEqual((es.best.x, es.best.f), (None, math.inf))
        X = es.ask()
        es.tell(X, [3.0, 1.0, 2.0, 4.0])
        self.assertEqual((es.best.x, es.best.f, es.best.evals), (X[1], 1.0, 4))

    def test_new_fields_round_trip(self):
        """CMA_active, bipop, restarts and incpopsize reach the server (they
        run once the server of this tree takes them)."""
        for field, opts, kw, want in [
            ("active", {"CMA_active": True, "seed": 1}, {}, {"active": True}),
            ("active", {"CMA_active": False, "seed": 1}, {}, {"active": False}),
            ("bipop", {"seed": 1}, dict(restarts=2, bipop=True), {"strategy": "bipop", "max": 2}),
            ("incpopsize", {"seed": 1}, dict(restarts=2, incpopsize=3),
             {"strategy": "ipop", "max": 2, "incpopsize": 3}),
            ("incpopsize", {"seed": 1}, dict(restarts=0, bipop=True), {"strategy": "none", "max": 0}),
            ("point", {"seed": 1}, dict(restarts={"strategy": "ipop", "max": 1, "point": "uniform",
                                                  "region": [-2, 2]}), {"point": "uniform"}),
        ]:
            with self.subTest(field=field, want=want):
                try:
                    with quiet_logs():
                        es = self.client.create([1.0] * 2, 0.5, opts, algorithm="cma-es", **kw)
                except selfcma.InvalidRequest as e:
                    skip_unless_server_takes(self, e, field)
                es.tell(es.ask(), [1.0] * es.popsize)
                info = es.info
                got = {k: info["restarts"].get(k) for k in want if k != "active"}
                if "active" in want:
                    got["active"] = info.get("active")
                self.assertEqual(got, want)


class FailoverLiveTest(unittest.TestCase):
    """A session goes on through another server of the same database when
    its server dies (bbolt: one server at a time, so the second starts on
    the file once the first is dead)."""

    def test_session_and_worker_go_on_after_their_server_dies(self):
        first = Server().start()
        second = Server()
        self.addCleanup(first.close)
        self.addCleanup(second.close)
        second.db = first.db
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            second.addr = "127.0.0.1:%d" % sock.getsockname()[1]
        c = Client([first.url, second.url], retries=2, backoff=0.05)
        es = c.create([1.0] * 3, 0.5, {"popsize": 6, "seed": 9}, algorithm="cma-es")
        es.tell(es.ask(), [1.0] * 6)
        X = es.ask()
        first.kill()
        second.start()
        with quiet_logs():
            es.tell(X, [sphere(x) for x in X])
            self.assertEqual(es.generation, 2)
            self.assertEqual(c.url, second.url)
            # A worker on the same client goes on too.
            done = c.work(sphere, es.id, max_evaluations=6)
        self.assertEqual(done, 6)
        self.assertEqual(c.session(es.id).generation, 3)


if __name__ == "__main__":
    unittest.main()
