"""Tests that need no server: conversion of the caller's values, the error
mapping and the retries, against a tiny http.server stub."""

from __future__ import annotations

import email.utils
import http.server
import json
import math
import pickle
import socket
import threading
import time
import unittest
import uuid

from _support import FakeArray, FakeTransport, fake_client

import selfcma
from selfcma import _convert as conv
from selfcma import errors
from selfcma.session import Session, _permutation


class ConvertTest(unittest.TestCase):
    def test_vector(self):
        self.assertEqual(conv.vector(FakeArray([1, 2.5]), "x0"), [1.0, 2.5])
        self.assertEqual(conv.vector((1, 2), "x0"), [1.0, 2.0])
        self.assertEqual(conv.vector([FakeArray(3.0)], "x0"), [3.0])  # numpy scalars
        for bad, exc in [("ab", TypeError), (3.0, TypeError), ([1, "a"], TypeError), ([1, None], TypeError),
                         ([True], TypeError), ([math.nan], ValueError), ([math.inf], ValueError)]:
            with self.subTest(bad=bad), self.assertRaises(exc):
                conv.vector(bad, "x0")
        with self.assertRaisesRegex(ValueError, "has 1 values, want 2"):
            conv.vector([1], "lower", 2)

    def test_matrix(self):
        m = conv.matrix(FakeArray([[1, 2], [3, 4]]))
        self.assertEqual(m, [[1.0, 2.0], [3.0, 4.0]])
        self.assertTrue(all(type(v) is float for r in m for v in r))
        with self.assertRaisesRegex(TypeError, r"X\[1\]\[0\]"):
            conv.matrix([[1.0], ["x"]])

    def test_fitness(self):
        self.assertEqual(conv.fitness(FakeArray([1, None, math.nan, math.inf, FakeArray(2.0)])),
                         [1.0, None, None, None, 2.0])
        with self.assertRaisesRegex(ValueError, "-inf"):
            conv.fitness([1.0, -math.inf])
        with self.assertRaisesRegex(ValueError, "fitness has 1 values, the batch has 2"):
            conv.fitness([1.0], 2)
        with self.assertRaises(TypeError):
            conv.fitness([1.0, "bad"])
        with self.assertRaises(TypeError):
            conv.fitness(1.0)

    def test_integer(self):
        self.assertEqual(conv.integer(FakeArray(7), "seed"), 7)
        self.assertEqual(conv.integer(2 ** 64 - 1, "seed"), 2 ** 64 - 1)
        self.assertEqual(conv.integer(8.0, "population_size"), 8)
        for bad in (1.5, "3", True):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                conv.integer(bad, "seed")

    def test_bounds(self):
        self.assertEqual(conv.bounds([-1, 1], 2), {"lower": [-1.0, -1.0], "upper": [1.0, 1.0]})
        self.assertEqual(conv.bounds((FakeArray([0, 1]), 5), 2), {"lower": [0.0, 1.0], "upper": [5.0, 5.0]})
        self.assertEqual(conv.bounds({"lower": [0], "upper": [1]}, 1), {"lower": [0.0], "upper": [1.0]})
        for bad in ([1, 2, 3], {"lower": [0]}, {"low": [0], "upper": [1]}, [[0, 0, 0], 1]):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                conv.bounds(bad, 2)

    def test_json_default(self):
        body = {"a": FakeArray([1.5, 2]), "b": (1, 2), "c": FakeArray(3)}
        self.assertEqual(json.loads(json.dumps(body, default=conv.json_default)), {"a": [1.5, 2], "b": [1, 2], "c": 3})

    def test_permutation(self):
        C = [[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]
        self.assertEqual(_permutation([r[:] for r in C], C), [0, 1, 2])
        p = _permutation([[3.0, 4.0], [1.0, 2.0], [1.0, 2.0]], C)
        self.assertEqual(sorted(p), [0, 1, 2])
        self.assertEqual(p[0], 1)
        self.assertIsNone(_permutation([[3.0, 4.0], [3.0, 4.0], [1.0, 2.0]], C))
        self.assertIsNone(_permutation(C[:2], C))


class ErrorMappingTest(unittest.TestCase):
    def body(self, code, **extra):
        return json.dumps({"error": dict(code=code, message=f"about {code}", **extra)}).encode()

    def test_codes(self):
        table = [
            (400, "invalid", errors.InvalidRequest),
            (405, "method_not_allowed", errors.InvalidRequest),
            (422, "out_of_range", errors.OutOfRange),
            (413, "too_large", errors.TooLarge),
            (401, "unauthorized", errors.Unauthorized),
            (404, "not_found", errors.NotFound),
            (409, "conflict", errors.Conflict),
            (409, "stopped", errors.Stopped),
            (500, "internal", errors.ServerError),
        ]
        for status, code, cls in table:
            with self.subTest(code=code):
                e = errors.error_from_answer(status, self.body(code), method="GET", url="http://h/v1/x")
                self.assertIs(type(e), cls)
                self.assertEqual((e.code, e.status, e.message, e.method, e.url),
                                 (code, status, f"about {code}", "GET", "http://h/v1/x"))
                self.assertEqual(str(e), f"{status} {code}: about {code} (GET http://h/v1/x)")
                again = pickle.loads(pickle.dumps(e))
                self.assertIs(type(again), cls)
                self.assertEqual((again.code, again.status), (code, status))

    def test_details(self):
        e = errors.error_from_answer(409, self.body("stopped", generation=3,
                                                    stop_reasons=[{"name": "tol_fun", "value": 1e-12}]))
        self.assertEqual(e.generation, 3)
        self.assertEqual(e.stop_reasons, {"tol_fun": 1e-12})

    def test_by_status(self):
        table = [
            (502, b"<html>Bad Gateway</html>", errors.ServerError),
            (404, b"not here", errors.NotFound),
            (409, b"", errors.Conflict),
            (422, b"{}", errors.OutOfRange),
            (418, b"teapot", errors.SelfCMAError),
            (400, self.body("new_code_of_v2"), errors.InvalidRequest),
        ]
        for status, body, cls in table:
            with self.subTest(status=status):
                e = errors.error_from_answer(status, body, reason="Reason")
                self.assertIs(type(e), cls)
                self.assertEqual(e.status, status)
        e = errors.error_from_answer(502, b"<html>Bad Gateway</html>")
        self.assertIsNone(e.code)
        self.assertIn("Bad Gateway", e.message)

    def test_hierarchy(self):
        self.assertTrue(issubclass(selfcma.InvalidRequest, ValueError))
        self.assertTrue(issubclass(selfcma.NotFound, LookupError))
        self.assertTrue(issubclass(selfcma.ServerUnavailable, ConnectionError))
        self.assertTrue(issubclass(selfcma.ServerUnavailable, selfcma.ServerError))
        self.assertTrue(issubclass(selfcma.Stopped, selfcma.Conflict))
        for name in selfcma.__all__:
            cls = getattr(selfcma, name)
            if isinstance(cls, type) and issubclass(cls, Exception):
                self.assertTrue(issubclass(cls, selfcma.SelfCMAError), name)


class Stub:
    """An HTTP server that answers from a script: a list of (status, body)
    or "drop" (close the connection without an answer), the last entry
    repeated; it records every request."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def handle_one(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                stub.requests.append((self.command, self.path, dict(self.headers), body))
                step = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
                if step == "drop":
                    self.close_connection = True
                    return
                status, payload, *extra = step
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in (extra[0] if extra else {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json" if not isinstance(payload, bytes)
                                 else "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = handle_one

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


SESSION = {
    "id": "abc", "name": "", "algorithm": "cma-es", "dimension": 2, "population_size": 2, "seed": 1,
    "status": "running", "stop_reasons": [], "generation": 0, "evaluations": 0, "best": None,
    "mean": [0.0, 0.0], "sigma": 1.0,
    "hyperparameters": {"c1": 0.1, "cmu": 0.01, "cc": 0.5, "c_sigma": 0.4, "d_sigma": 1.4, "mu_w": 1.0},
}
BATCH = {"generation": 0, "candidates": [[0.5, -0.25], [1.0, 2.0]]}
UNAVAILABLE = (503, {"error": {"code": "unavailable", "message": "restarting"}})


class StubTest(unittest.TestCase):
    def stub(self, *script):
        s = Stub(script)
        self.addCleanup(s.close)
        return s

    def client(self, stub, **kw):
        c = selfcma.Client(stub.url, **kw)
        self.sleeps = []
        c._t._sleep = self.sleeps.append
        return c

    def test_token_header_and_body(self):
        s = self.stub((201, SESSION))
        self.client(s, token="t0k").create(FakeArray([1, 2]), 0.5, seed=FakeArray(3), termination={"tol_x": 1e-9})
        method, path, headers, body = s.requests[0]
        self.assertEqual((method, path), ("POST", "/v1/sessions"))
        self.assertEqual(headers["Authorization"], "Bearer t0k")
        self.assertEqual(headers["Content-Type"], "application/json")
        # The algorithm is the server's default unless given.
        self.assertEqual(json.loads(body), {"x0": [1.0, 2.0], "sigma0": 0.5, "seed": 3,
                                            "termination": {"tol_x": 1e-9}})
        s2 = self.stub((200, {"sessions": []}))
        self.client(s2).sessions()
        self.assertNotIn("Authorization", s2.requests[0][2])

    def test_retries_then_success(self):
        s = self.stub(UNAVAILABLE, "drop", (504, b"<html>gateway</html>"), (200, SESSION))
        with self.assertLogs("selfcma", "WARNING") as logs:
            es = self.client(s, retries=3, backoff=1, max_backoff=3).session("abc")
        self.assertEqual(es.id, "abc")
        self.assertEqual(len(s.requests), 4)
        self.assertEqual(len(self.sleeps), 3)
        for got, cap in zip(self.sleeps, (1, 2, 3)):
            self.assertTrue(cap / 2 <= got <= cap, self.sleeps)
        self.assertEqual(len(logs.output), 3)

    def test_retries_are_bounded(self):
        s = self.stub(UNAVAILABLE)
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.ServerUnavailable) as cm:
            self.client(s, retries=2).session("abc")
        self.assertEqual(len(s.requests), 3)
        self.assertEqual((cm.exception.status, cm.exception.method), (503, "GET"))
        self.assertIn("no answer after 3 tries", str(cm.exception))

    def test_no_retries(self):
        s = self.stub(UNAVAILABLE)
        with self.assertRaises(selfcma.ServerUnavailable):
            self.client(s, retries=0).session("abc")
        self.assertEqual(len(s.requests), 1)

    def test_create_is_retried_with_its_key(self):
        for step in (UNAVAILABLE, "drop"):
            with self.subTest(step=step):
                s = self.stub(step, (201, SESSION))
                with self.assertLogs("selfcma", "WARNING"):
                    es = self.client(s).create([1.0], 0.5)
                self.assertEqual(es.id, "abc")
                self.assertEqual(len(s.requests), 2)
                keys = [r[2].get("Idempotency-Key") for r in s.requests]
                self.assertEqual(keys[0], keys[1])
                uuid.UUID(keys[0])  # a random UUID when the caller gives none
                self.assertEqual(s.requests[0][3], s.requests[1][3])
        s = self.stub((201, SESSION))
        c = self.client(s)
        c.create([1.0], 0.5, idempotency_key="my-run-1")
        c.create([1.0], 0.5)
        c.create([1.0], 0.5)
        keys = [r[2].get("Idempotency-Key") for r in s.requests]
        self.assertEqual(keys[0], "my-run-1")
        self.assertNotEqual(keys[1], keys[2])  # a new key for each create

    def test_refused_connection_is_retried_for_create(self):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        c = selfcma.Client(f"127.0.0.1:{port}", retries=2)
        sleeps = []
        c._t._sleep = sleeps.append
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.ServerUnavailable) as cm:
            c.create([1.0], 0.5)
        self.assertEqual(len(sleeps), 2)
        self.assertIsInstance(cm.exception.__cause__.reason, ConnectionRefusedError)

    def test_internal_error_is_not_retried(self):
        s = self.stub((500, {"error": {"code": "internal", "message": "internal error"}}))
        with self.assertRaises(selfcma.ServerError) as cm:
            self.client(s).session("abc")
        self.assertIs(type(cm.exception), selfcma.ServerError)
        self.assertEqual(len(s.requests), 1)

    def test_lost_tell_answer_is_retried(self):
        # A 503's answer must not become the body of the retry.
        for step in ("drop", UNAVAILABLE):
            with self.subTest(step=step):
                s = self.stub((200, SESSION), (200, BATCH), step, (200, dict(SESSION, generation=1, evaluations=2)))
                c = self.client(s)
                es = c.session("abc")
                X = es.ask()
                with self.assertLogs("selfcma", "WARNING"):
                    es.tell(X, [1.0, None])
                self.assertEqual(es.generation, 1)
                tells = [r for r in s.requests if r[1].endswith("/tell?next=true")]
                self.assertEqual(len(tells), 2)
                self.assertEqual(tells[0][3], tells[1][3])
                self.assertEqual(json.loads(tells[0][3]), {"generation": 0, "fitness": [1.0, None]})

    def test_ask_after_tell_uses_the_batch_the_tell_carried(self):
        nxt = {"generation": 1, "candidates": [[0.25, 0.5], [-1.0, 3.0]]}
        s = self.stub((200, SESSION), (200, BATCH), (200, dict(SESSION, generation=1, evaluations=2, next=nxt)),
                      (200, dict(SESSION, generation=2, evaluations=4)), (200, dict(BATCH, generation=2)))
        es = self.client(s).session("abc")
        X = es.ask()
        es.tell(X, [1.0, 2.0])
        self.assertNotIn("next", es.info)
        self.assertEqual(es.ask(), nxt["candidates"])
        self.assertEqual([r[1] for r in s.requests], ["/v1/sessions/abc", "/v1/sessions/abc/ask",
                                                      "/v1/sessions/abc/tell?next=true"])
        # A tell answered without next (a server before it, or a stopped
        # session) leaves ask to the server.
        es.tell(nxt["candidates"], [1.0, 2.0])
        es.ask()
        self.assertEqual([r[1] for r in s.requests][3:], ["/v1/sessions/abc/tell?next=true", "/v1/sessions/abc/ask"])

    def test_tell_refuses_other_points_without_sending(self):
        s = self.stub((200, SESSION), (200, BATCH))
        es = self.client(s).session("abc")
        X = es.ask()
        with self.assertRaisesRegex(ValueError, "not the batch of generation 0"):
            es.tell([X[0], [9.0, 9.0]], [1.0, 2.0])
        self.assertEqual([r[1] for r in s.requests], ["/v1/sessions/abc", "/v1/sessions/abc/ask",
                                                      "/v1/sessions/abc/ask"])

    def test_result_and_stop(self):
        state = dict(SESSION, status="stopped", stop_reasons=[{"name": "tol_fun", "value": 1e-12}],
                     best={"x": [1.0, 2.0], "f": 0.5, "generation": 4}, generation=5, evaluations=10)
        es = Session(None, state)
        self.assertEqual(es.stop(), {"tol_fun": 1e-12})
        r = es.result
        self.assertEqual((r.xbest, r.fbest, r.best_generation, r.generation, r.evaluations, r.sigma, r.status),
                         ([1.0, 2.0], 0.5, 4, 5, 10, 1.0, "stopped"))
        self.assertEqual(es.hyperparameters["c1"], 0.1)
        self.assertEqual(Session(None, SESSION).stop(), {})
        self.assertIsNone(Session(None, SESSION).result.xbest)
        self.assertEqual(len(es.progress_line().split()), 7)

    def test_storage_full_is_retried_honouring_retry_after(self):
        # Issue 16: a write the server could not make for lack of disk
        # space is answered 507 storage_full with Retry-After; it changed
        # nothing, so the client sends it again, even a request not marked
        # idempotent, after the time the server asks for.
        full = (507, {"error": {"code": "storage_full", "message": "no space left on device"}}, {"Retry-After": "2"})
        s = self.stub(full, full, (200, dict(SESSION, generation=1)))
        c = self.client(s, retries=3, backoff=0.01, max_backoff=0.02)
        with self.assertLogs("selfcma", "WARNING") as logs:
            ans = c.request("POST", "/v1/sessions/abc/tell", {"generation": 0, "fitness": [1, 2]}, idempotent=False)
        self.assertEqual(ans["generation"], 1)
        self.assertEqual(self.sleeps, [2.0, 2.0])  # Retry-After, not the backoff
        self.assertEqual(len(s.requests), 3)
        self.assertEqual({r[3] for r in s.requests}, {s.requests[0][3]})  # the same body each time
        self.assertIn("507 no space left on device", logs.output[0])

    def test_storage_full_after_the_retries(self):
        full = (507, {"error": {"code": "storage_full", "message": "no space left on device"}}, {"Retry-After": "1"})
        s = self.stub(full)
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.StorageFull) as cm:
            self.client(s, retries=2).create([1.0], 0.5)
        e = cm.exception
        self.assertEqual((e.status, e.code, len(s.requests)), (507, "storage_full", 3))
        self.assertIn("after 3 tries", str(e))
        self.assertIsInstance(e, selfcma.ServerError)
        # Without a code (a proxy), the status alone says it.
        s = self.stub((507, b"Insufficient Storage"))
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.StorageFull):
            self.client(s, retries=1).session("abc")

    def test_throttled_and_unavailable_honour_retry_after(self):
        date = email.utils.formatdate(time.time() + 30, usegmt=True)
        s = self.stub((429, {"error": {"code": "too_many_requests", "message": "slow down"}}, {"Retry-After": date}),
                      (503, {"error": {"code": "unavailable", "message": "busy"}}, {"Retry-After": "1.5"}),
                      (503, {"error": {"code": "unavailable", "message": "busy"}}, {"Retry-After": "600"}),
                      (503, {"error": {"code": "unavailable", "message": "busy"}}, {"Retry-After": "soon"}),
                      (200, SESSION))
        c = self.client(s, retries=5, backoff=0.25, max_backoff=0.25)
        with self.assertLogs("selfcma", "WARNING"):
            c.session("abc")
        self.assertEqual(len(self.sleeps), 4)
        self.assertTrue(27 <= self.sleeps[0] <= 30, self.sleeps)  # an HTTP-date, seconds from now
        self.assertEqual(self.sleeps[1:3], [1.5, 60.0])  # capped at MAX_RETRY_AFTER
        self.assertTrue(0.125 <= self.sleeps[3] <= 0.25, self.sleeps)  # unreadable: the backoff
        s = self.stub((429, {"error": {"code": "too_many_requests", "message": "slow down"}}, {"Retry-After": "1"}))
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.Throttled) as cm:
            self.client(s, retries=1).session("abc")
        self.assertEqual(cm.exception.status, 429)
        # A 503 is not retried for a request that may not be sent twice.
        s = self.stub(UNAVAILABLE, (200, SESSION))
        with self.assertRaises(selfcma.ServerUnavailable):
            self.client(s).request("POST", "/v1/x", {}, idempotent=False)
        self.assertEqual(len(s.requests), 1)

    def test_retry_after_parsing(self):
        from selfcma._http import retry_after

        now = 1_000_000_000.0
        self.assertEqual(retry_after("3", now), 3.0)
        self.assertEqual(retry_after("-3", now), 0.0)
        self.assertEqual(retry_after(email.utils.formatdate(now + 10, usegmt=True), now), 10.0)
        for v in (None, "", "soon", "nan"):
            self.assertIsNone(retry_after(v, now), v)

    def test_bad_url(self):
        with self.assertRaises(ValueError):
            selfcma.Client("ftp://example")
        self.assertEqual(selfcma.Client("127.0.0.1:1/").url, "http://127.0.0.1:1")
        with self.assertRaises(ValueError):
            selfcma.Client("http://127.0.0.1:1").session("a/b")


class InjectTest(unittest.TestCase):
    """What Session.inject and create's warm_start send (POST
    /v1/sessions/{id}/inject, the create's warm_start)."""

    def test_session_inject(self):
        t = FakeTransport()
        es = fake_client(t).create([0.0, 0.0], 0.5)
        self.assertEqual(es.inject([[1, 2]]), 1)
        self.assertEqual(es.inject([[0.5, 0.25], [0.0, 1.0]], clip=False), 1)
        self.assertEqual([c[2] for c in t.of("POST", "/inject")],
                         [{"points": [[1.0, 2.0]], "clip": True}, {"points": [[0.5, 0.25], [0.0, 1.0]], "clip": False}])
        with self.assertRaisesRegex(ValueError, r"points\[0\] has 3 values, want 2"):
            es.inject([[1, 2, 3]])
        with self.assertRaisesRegex(ValueError, "empty"):
            es.inject([None])
        self.assertEqual(len(t.of("POST", "/inject")), 2)  # refused before sending
        es.inject([None, (3, 4)], force=True)  # pycma's signature: None skipped
        self.assertEqual(t.of("POST", "/inject")[-1][2], {"points": [[3.0, 4.0]], "clip": True})

    def test_warm_start(self):
        t = FakeTransport()
        c = fake_client(t)
        first = c.create([0.0, 0.0], 0.5)
        c.create([0.0, 0.0], 0.5, warm_start=first)
        c.create([0.0, 0.0], 0.5, warm_start="abc")
        self.assertEqual([b[2].get("warm_start") for b in t.of("POST", "/v1/sessions")],
                         [None, {"session": "s1"}, {"session": "abc"}])
        with self.assertRaisesRegex(TypeError, "warm_start"):
            c.create([0.0], 0.5, warm_start=3)


OVERLOADED = (503, {"error": {"code": "overloaded", "message": "reading too many bodies"}}, {"Retry-After": "0.5"})
CLAIM = {"generation": 0, "index": 1, "x": [0.5, 0.5], "expires_at": "2026-01-01T00:00:00Z"}


class RetryAndLeaseTest(StubTest):
    """Retries of a 503 honouring Retry-After, with the same
    Idempotency-Key: an injection and a claim sent again after a lost
    answer apply once; leases released when a worker stops."""

    def test_inject_retried_with_its_key(self):
        s = self.stub((200, SESSION), UNAVAILABLE, "drop", (200, {"queued": 1, "generation": 1, "waiting": 1}))
        es = self.client(s, retries=3).session("abc")
        with self.assertLogs("selfcma", "WARNING"):
            self.assertEqual(es.inject([[1, 2]]), 1)
        injects = [r for r in s.requests if r[1].endswith("/inject")]
        self.assertEqual(len(injects), 3)
        keys = {r[2].get("Idempotency-Key") for r in injects}
        self.assertEqual(len(keys), 1, keys)
        self.assertTrue(next(iter(keys)).startswith("inject-"))
        # Another injection has another key.
        s.script = [(200, {"queued": 1, "generation": 1, "waiting": 2})]
        es.inject([[1, 2]])
        self.assertNotIn(s.requests[-1][2]["Idempotency-Key"], keys)

    def test_claim_without_worker_retried_with_its_key(self):
        s = self.stub((200, SESSION), OVERLOADED, UNAVAILABLE, (200, CLAIM))
        es = self.client(s, retries=3, backoff=1).session("abc")
        with self.assertLogs("selfcma", "WARNING"):
            c = es.claim()
        claims = [r for r in s.requests if "/claim" in r[1]]
        self.assertEqual(len(claims), 3)
        keys = {r[2].get("Idempotency-Key") for r in claims}
        self.assertEqual(len(keys), 1, keys)
        self.assertEqual(c.worker, next(iter(keys)))
        self.assertEqual(self.sleeps[0], 0.5)  # Retry-After, not the backoff
        # Its release names the key as the worker.
        s.script = [(200, {"generation": 0, "index": 1, "released": True})]
        self.assertTrue(es.release(c))
        self.assertIn("/release?", s.requests[-1][1])
        self.assertIn("worker=" + c.worker, s.requests[-1][1])
        self.assertIn("index=1", s.requests[-1][1])

    def test_overloaded_retried_even_when_not_idempotent(self):
        s = self.stub(OVERLOADED, (200, {"ok": True}))
        with self.assertLogs("selfcma", "WARNING"):
            self.assertEqual(self.client(s).request("POST", "/v1/x", {}, idempotent=False), {"ok": True})
        self.assertEqual(len(s.requests), 2)
        self.assertEqual(self.sleeps, [0.5])

    def test_work_releases_its_lease_when_it_stops(self):
        s = self.stub((200, SESSION), (200, CLAIM), (200, {"generation": 0, "index": 1, "released": True}))

        def f(x):
            raise KeyboardInterrupt

        with self.assertRaises(KeyboardInterrupt):
            self.client(s).work(f, "abc", worker="w1")
        paths = [r[1] for r in s.requests]
        self.assertIn("/claim", paths[1])
        self.assertIn("/release?", paths[2])
        self.assertIn("worker=w1", paths[2])
        self.assertNotIn("/tell", " ".join(paths))

    def test_work_tells_and_claims_in_one_request(self):
        # After the first claim, each tell claims the worker's next point
        # (one request an evaluation); an old server's answer without
        # "claim" makes the worker claim on its own; the last tell claims
        # nothing.
        told = dict(SESSION, partial={"indices": [1], "fitness": [0.5]})
        nxt = dict(CLAIM, index=0, x=[0.25, 0.25])
        s = self.stub((200, SESSION), (200, CLAIM), (200, dict(told, claim=nxt)), (200, told), (200, CLAIM),
                      (200, told))
        seen = []

        def f(x):
            seen.append(x)
            return sum(v * v for v in x)

        self.assertEqual(self.client(s).work(f, "abc", worker="w1", max_evaluations=3), 3)
        self.assertEqual(seen, [[0.5, 0.5], [0.25, 0.25], [0.5, 0.5]])
        paths = [r[1] for r in s.requests]
        self.assertEqual([p.split("/")[-1] for p in paths[1:]],
                         ["claim?worker=w1", "tell?claim=true&worker=w1", "tell?claim=true&worker=w1", "claim?worker=w1",
                          "tell"])


if __name__ == "__main__":
    unittest.main()
