"""The client's kept connections: one per thread and server, reused by the
idempotent requests, opened again at once when the server closed it while
idle (its idle timeout, a restart), never reused by a request that may not
be sent twice; closed by close() and not shared with a forked child."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
import unittest
from unittest import mock

from _support import Server, StubClients

import selfcma

SESSION = {"id": "abc", "name": "", "algorithm": "cma-es", "dimension": 2, "population_size": 2, "seed": 1,
           "status": "running", "stop_reasons": [], "generation": 0, "evaluations": 0, "best": None,
           "mean": [0.0, 0.0], "sigma": 1.0, "hyperparameters": {}}


class KeepAliveStub:
    """An HTTP/1.1 server that keeps connections open and records each
    request with the connection it came on (the client's port). A script
    of steps, the last repeated: "ok" answers {"ok": true}; "ok-close"
    answers and then closes the connection without saying so (as a
    server's idle timeout does later); "drop" reads the request and
    closes the connection without an answer."""

    def __init__(self, script=("ok",), port=0):
        self.script = list(script)
        self.requests = []  # (client port, method, path, headers)
        self.closed = []  # client ports whose connection the client closed
        self.lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle(self):
                super().handle()
                with stub.lock:
                    stub.closed.append(self.client_address[1])

            def handle_one(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                with stub.lock:
                    stub.requests.append((self.client_address[1], self.command, self.path, dict(self.headers)))
                    step = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
                if step == "drop":
                    self.close_connection = True
                    return
                data = json.dumps(dict(SESSION, ok=True)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                if step == "ok-close":
                    self.close_connection = True

            do_GET = do_POST = handle_one

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def connections(self):
        with self.lock:
            return [r[0] for r in self.requests]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(cond, what, timeout=120.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.01)


class KeptConnectionTest(StubClients, unittest.TestCase):
    def stub(self, *script):
        s = KeepAliveStub(script or ("ok",))
        self.addCleanup(s.close)
        return s

    def test_requests_of_a_thread_share_one_connection(self):
        s = self.stub()
        c = self.client(s.url)
        for _ in range(5):
            c.health()
        c.request("POST", "/v1/x", {"a": 1})
        conns = s.connections()
        self.assertEqual(len(conns), 6)
        self.assertEqual(len(set(conns)), 1, conns)
        self.assertEqual(s.requests[-1][3].get("Content-Length"), "8")

        # Another thread has a connection of its own.
        errs = []

        def other():
            try:
                for _ in range(3):
                    c.health()
            except Exception as e:  # noqa: BLE001 (reported below)
                errs.append(e)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        self.assertEqual(errs, [])
        conns = s.connections()
        self.assertEqual(len(set(conns)), 2, conns)
        self.assertEqual(len(set(conns[6:])), 1, conns)
        self.assertNotEqual(conns[6], conns[0])

    def test_close_closes_the_connections(self):
        s = self.stub()
        c = self.client(s.url)
        c.health()
        first = s.connections()[0]
        c.close()
        wait_for(lambda: first in s.closed, "the server to see the connection closed")
        c.health()  # a request after close opens a new connection
        self.assertNotEqual(s.connections()[1], first)
        with selfcma.Client(s.url) as c2:
            c2.health()
            mine = s.connections()[2]
        wait_for(lambda: mine in s.closed, "the with block to close its connection")

    def test_close_while_other_threads_send(self):
        # A connection in use is closed when its answer has come: its
        # request neither fails nor is retried.
        s = self.stub()
        c = self.client(s.url)
        errs = []

        def run():
            try:
                for i in range(100):
                    c.health()
                    if i % 10 == 0:
                        c.close()
            except Exception as e:  # noqa: BLE001 (reported below)
                errs.append(e)

        with self.assertNoLogs("selfcma", "WARNING"):
            ts = [threading.Thread(target=run) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual(errs, [])
        self.assertEqual(len(s.requests), 400)
        self.assertEqual(self.sleeps, [])
        c.close()
        wait_for(lambda: set(s.connections()) <= set(s.closed), "every connection closed")

    def test_connection_closed_while_idle_is_opened_again_without_a_retry(self):
        # As a server's idle timeout, or its shutdown: the kept connection
        # is gone when the next request is sent on it.
        s = self.stub("ok-close")
        c = self.client(s.url)
        with self.assertNoLogs("selfcma", "WARNING"):
            for _ in range(4):
                wait_for(lambda: len(s.closed) == len(s.requests), "the server to close the connection")
                self.assertTrue(c.session("abc").id, "abc")
        self.assertEqual(self.sleeps, [])
        conns = s.connections()
        self.assertEqual(len(conns), 4)  # each request reached the server once
        self.assertEqual(len(set(conns)), 4, conns)

    def test_connection_idle_too_long_is_not_used(self):
        s = self.stub()
        c = self.client(s.url)
        c.health()
        c.health()
        with mock.patch("selfcma._http.MAX_IDLE", 0.0):
            c.health()
            c.health()
        conns = s.connections()
        self.assertEqual(conns[0], conns[1])
        self.assertEqual(len(set(conns)), 3, conns)
        wait_for(lambda: conns[0] in s.closed and conns[2] in s.closed, "the idle connections closed")

    def test_request_that_is_not_idempotent_gets_a_connection_of_its_own(self):
        s = self.stub()
        c = self.client(s.url)
        c.health()
        c.request("POST", "/v1/x", {}, idempotent=False)
        c.health()
        conns = s.connections()
        self.assertEqual(conns[0], conns[2])
        self.assertNotEqual(conns[1], conns[0])
        # So a kept connection the server closed cannot fail it.
        s.script = ["ok-close", "ok"]
        c.health()
        wait_for(lambda: conns[0] in s.closed, "the server to close the kept connection")
        with self.assertNoLogs("selfcma", "WARNING"):
            self.assertTrue(c.request("POST", "/v1/x", {}, idempotent=False)["ok"])
        self.assertEqual([r[1] for r in s.requests].count("POST"), 2)

    def test_request_that_is_not_idempotent_is_not_sent_twice(self):
        # Its connection broke after it was sent: it may have been applied.
        s = self.stub("ok", "drop", "ok")
        c = self.client(s.url)
        c.health()
        with self.assertRaises(selfcma.ServerUnavailable) as cm:
            c.request("POST", "/v1/sessions/abc/inject", {"points": [[0, 0]]}, idempotent=False)
        self.assertIn("not retried", str(cm.exception))
        self.assertEqual([r[1] for r in s.requests].count("POST"), 1)
        self.assertEqual(self.sleeps, [])
        c.health()  # the kept connection still serves

    def test_idempotent_request_broken_on_a_new_connection_is_retried_as_before(self):
        # Not a kept connection the server closed while idle: a failure,
        # retried after the backoff and logged.
        s = self.stub("drop", "ok")
        c = self.client(s.url)
        with self.assertLogs("selfcma", "WARNING") as logs:
            c.health()
        self.assertEqual(len(self.sleeps), 1)
        self.assertIn("retry 1 of", logs.output[0])
        self.assertEqual(len(s.requests), 2)

    def test_forked_child_opens_its_own_connection(self):
        if not hasattr(os, "fork"):
            self.skipTest("no os.fork on this system")
        s = self.stub()
        c = self.client(s.url)
        c.health()
        pid = os.fork()
        if pid == 0:  # the child: one request, then out without cleanups
            code = 1
            try:
                c.health()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        c.health()
        conns = s.connections()
        self.assertEqual(len(conns), 3)
        self.assertEqual(conns[0], conns[2])  # the parent's still serves it
        self.assertNotEqual(conns[1], conns[0])

    def test_environment_proxy_is_used(self):
        # A proxy of the environment takes the request for a host that is
        # not this machine (urllib's way, a connection a request).
        proxy = self.stub()
        with mock.patch.dict(os.environ, {"http_proxy": proxy.url, "no_proxy": ""}):
            c = self.client("http://selfcma.invalid:8080")
            c.health()
            c.health()
        paths = [r[2] for r in proxy.requests]
        self.assertEqual(paths, ["http://selfcma.invalid:8080/healthz"] * 2)
        # Never for this machine.
        s = self.stub()
        with mock.patch.dict(os.environ, {"http_proxy": proxy.url, "no_proxy": ""}):
            self.client(s.url).health()
        self.assertEqual(len(proxy.requests), 2)
        self.assertEqual(len(s.requests), 1)

    def test_url_with_a_path(self):
        s = self.stub()
        self.client(s.url + "/api/").health()
        self.assertEqual(s.requests[0][2], "/api/healthz")

    def test_ipv6_address_without_a_port(self):
        # http.client would take the address's last group for the port.
        for url, port in (("http://[::1]/", 80), ("https://[::1]", 443), ("http://[::1]:8080", 8080)):
            conn = selfcma.Client(url)._t._keepers[0].connection()
            self.assertEqual((conn.host, conn.port), ("::1", port), url)


class RealServerTest(unittest.TestCase):
    """The server of this repository: a kept connection across a restart."""

    def test_restart_and_stop(self):
        server = Server().start()
        self.addCleanup(server.close)
        c = selfcma.Client(server.url, retries=20, backoff=0.05, max_backoff=0.5)
        self.addCleanup(c.close)
        sleeps = []
        c._t._sleep = lambda d: (sleeps.append(d), time.sleep(d))
        es = c.create([1.0, 2.0], 0.5, algorithm="cma-es", seed=1, population_size=4)
        cl = es.claim(60, "w")
        port = c._t._keepers[0].connection().sock.getsockname()[1]
        cl = es.tell_and_claim(cl, 1.0, 60)
        self.assertEqual(c._t._keepers[0].connection().sock.getsockname()[1], port)  # reused
        for how in (server.kill, server.stop):
            how()
            server.start()
            with self.assertNoLogs("selfcma", "WARNING"):
                cl = es.tell_and_claim(cl, 1.0, 60)
            self.assertEqual(sleeps, [])
        es.tell_and_claim(cl, 1.0, 60)  # the generation's last
        self.assertEqual(c.session(es.id).result.evaluations, 4)

    def test_refused_after_a_kept_connection(self):
        server = Server().start()
        self.addCleanup(server.close)
        c = selfcma.Client(server.url, retries=1, backoff=0.01)
        self.addCleanup(c.close)
        c.health()
        server.kill()
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.ServerUnavailable) as cm:
            c.health()
        self.assertIn("no answer after 2 tries", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__.reason, ConnectionRefusedError)


if __name__ == "__main__":
    unittest.main()
