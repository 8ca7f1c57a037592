"""The kept connection's HTTP/1.1 (selfcma._wire) against a server of raw
bytes: chunked answers, Connection: close, 1xx answers, answers split
across reads, answers cut short, oversized headers; and the retries of
the transport around them."""

from __future__ import annotations

import http.client
import io
import json
import socket
import threading
import time
import unittest

from _support import PKG_ROOT, StubClients  # noqa: F401 (PKG_ROOT puts this tree's package first)

import selfcma
from selfcma import _wire

CLOSE = object()  # in a step's pieces: the server closes the connection there

OK = b'{"ok": true}'


def answer(body=OK, *headers, status=b"200 OK"):
    """An answer's bytes with Content-Length."""
    head = [b"HTTP/1.1 " + status, b"Content-Type: application/json", *headers,
            b"Content-Length: %d" % len(body)]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class RawStub:
    """A server of raw bytes. Each request it reads (headers and a
    Content-Length body) gets the next step of the script, the last
    repeated: pieces of bytes sent with a pause between them (so that the
    client reads them apart), CLOSE closing the connection there."""

    PAUSE = 0.05

    def __init__(self, *script):
        self.script = list(script)
        self.requests = []  # (connection number, the request's bytes)
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        self.conns = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return  # closed
            with self.lock:
                self.conns += 1
                n = self.conns
            threading.Thread(target=self.handle, args=(sock, n), daemon=True).start()

    def handle(self, sock, n):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rfile = sock.makefile("rb")
        try:
            while True:
                req = self.read_request(rfile)
                if req is None:
                    return
                with self.lock:
                    self.requests.append((n, req))
                    step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
                for i, piece in enumerate(step):
                    if piece is CLOSE:
                        return
                    if i:
                        time.sleep(self.PAUSE)
                    sock.sendall(piece)
        except OSError:
            pass
        finally:
            rfile.close()
            sock.close()

    @staticmethod
    def read_request(rfile):
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = rfile.readline()
            if not line:
                return None
            head += line
        n = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":", 1)[1])
        return head + rfile.read(n)

    def close(self):
        self.listener.close()


class WireTest(unittest.TestCase):
    """read_answer and request_bytes on a connection's reader."""

    def read(self, *steps, method="GET"):
        """The answers to len(steps) requests on one connection."""
        s = RawStub(*steps)
        self.addCleanup(s.close)
        sock = socket.create_connection(s.listener.getsockname(), timeout=60)
        self.addCleanup(sock.close)
        reader = sock.makefile("rb")
        self.addCleanup(reader.close)
        out = []
        for _ in steps:
            sock.sendall(_wire.request_bytes(method, "/x", "h", {}, None))
            out.append(_wire.read_answer(reader, method))
        return out

    def test_content_length(self):
        [(status, reason, headers, body, close)] = self.read([answer(OK, b"Retry-After: 3")])
        self.assertEqual((status, reason, body, close), (200, "OK", OK, False))
        self.assertEqual(headers.get("content-type"), "application/json")
        self.assertEqual(headers.get("RETRY-AFTER"), "3")
        self.assertEqual(headers["Retry-after"], "3")
        self.assertIsNone(headers["X-Missing"])
        self.assertEqual(headers.get("X-Missing", ""), "")
        self.assertIn("Content-Length", headers)

    def test_chunked(self):
        body = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5;ext=1\r\n{\"ok\"\r\n" b"7\r\n: true}\r\n" b"0\r\nX-Trailer: t\r\n\r\n")
        first, second = self.read([body], [answer(b"{}")])
        self.assertEqual(first[3], OK)
        self.assertFalse(first[4])
        self.assertEqual(second[3], b"{}")  # the trailer was read: the next answer follows it

    def test_chunked_split_across_reads(self):
        step = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r", b"\n{\"ok\"\r\n7", b"\r\n: tr",
                b"ue}\r\n0\r\n", b"\r\n"]
        [(_, _, _, body, _)] = self.read(step)
        self.assertEqual(body, OK)

    def test_headers_and_body_split_across_reads(self):
        a = answer(OK, b"X-Long: " + b"v" * 5000)
        cut = [a[:10], a[10:40], a[40:5030], a[5030:-len(OK) - 3], a[-len(OK) - 3:-5], a[-5:]]
        self.assertEqual(b"".join(cut), a)
        [(status, _, headers, body, _)] = self.read(cut)
        self.assertEqual((status, body, headers.get("x-long")), (200, OK, "v" * 5000))

    def test_1xx_answers_skipped(self):
        step = [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", answer()]
        [(status, _, headers, body, _)] = self.read(step)
        self.assertEqual((status, body), (200, OK))
        self.assertNotIn("Link", headers)

    def test_connection_close_and_to_the_end(self):
        [(_, _, _, body, close)] = self.read([answer(OK, b"Connection: close")])
        self.assertEqual((body, close), (OK, True))
        # Neither length nor chunked: the body is what comes up to the end.
        [(_, _, _, body, close)] = self.read([b"HTTP/1.1 200 OK\r\n\r\n", b"{\"ok\":", b" true}", CLOSE])
        self.assertEqual((body, close), (OK, True))
        # HTTP/1.0 closes unless it says keep-alive.
        [(_, _, _, _, close)] = self.read([answer().replace(b"HTTP/1.1", b"HTTP/1.0")])
        self.assertTrue(close)
        [(_, _, _, _, close)] = self.read([answer(OK, b"Connection: keep-alive").replace(b"HTTP/1.1", b"HTTP/1.0")])
        self.assertFalse(close)

    def test_no_body(self):
        [(status, _, _, body, _)] = self.read([b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"])
        self.assertEqual((status, body), (204, b""))
        [(_, _, _, body, _)] = self.read([answer()], method="HEAD")
        self.assertEqual(body, b"")

    def test_cut_short(self):
        cases = [
            ("no answer", [CLOSE], http.client.RemoteDisconnected),
            ("within the status line", [b"HTTP/1.1 2", CLOSE], http.client.BadStatusLine),
            ("within the headers", [b"HTTP/1.1 200 OK\r\nContent-Le", CLOSE], http.client.IncompleteRead),
            ("within the body", [answer()[:-3], CLOSE], http.client.IncompleteRead),
            ("within a chunk", [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{\"ok\"", CLOSE],
             http.client.IncompleteRead),
            ("before the last chunk", [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n", CLOSE],
             http.client.IncompleteRead),
        ]
        for name, step, exc in cases:
            with self.subTest(name), self.assertRaises(exc):
                self.read(step)
        self.assertTrue(issubclass(http.client.RemoteDisconnected, ConnectionResetError))

    def test_bad_answers(self):
        cases = [
            ("not HTTP", [b"SSH-2.0-OpenSSH\r\n\r\n"], http.client.BadStatusLine),
            ("status not a number", [b"HTTP/1.1 2x0 OK\r\n\r\n"], http.client.BadStatusLine),
            ("status out of range", [b"HTTP/1.1 1000 OK\r\n\r\n"], http.client.BadStatusLine),
            ("HTTP/2", [b"HTTP/2 200 OK\r\n\r\n"], http.client.UnknownProtocol),
            ("headers over the bound", [answer(OK, b"X-Big: " + b"v" * _wire.MAX_HEADER_BYTES)],
             http.client.LineTooLong),
            ("headers over the bound in many lines", [answer(OK, *[b"X-%d: %s" % (i, b"v" * 1000) for i in range(70)])],
             http.client.LineTooLong),
            ("too many headers", [answer(OK, *[b"X-%d: v" % i for i in range(_wire.MAX_HEADERS)])],
             http.client.HTTPException),
            ("a bad chunk size", [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
             http.client.IncompleteRead),
        ]
        for name, step, exc in cases:
            with self.subTest(name), self.assertRaises(exc):
                self.read(step)
        # Just under the bounds: read.
        [(_, _, headers, _, _)] = self.read([answer(OK, *[b"X-%d: v" % i for i in range(_wire.MAX_HEADERS - 3)])])
        self.assertEqual(len(headers), _wire.MAX_HEADERS - 1)

    def test_folded_and_repeated_headers(self):
        [(_, _, headers, _, _)] = self.read([answer(OK, b"X-A: one", b"\ttwo", b"x-a: again", b"no colon")])
        self.assertEqual(headers.get("X-A"), "one two")

    def test_request_bytes(self):
        got = _wire.request_bytes("POST", "/v1/x?a=1", "h:8", {"Accept": "application/json", "X-N": 3}, b"{}")
        self.assertEqual(got, b"POST /v1/x?a=1 HTTP/1.1\r\nHost: h:8\r\nAccept-Encoding: identity\r\n"
                              b"Accept: application/json\r\nX-N: 3\r\nContent-Length: 2\r\n\r\n{}")
        self.assertTrue(_wire.request_bytes("POST", "/", "h", {}, None).endswith(b"\r\nContent-Length: 0\r\n\r\n"))
        self.assertNotIn(b"Content-Length", _wire.request_bytes("GET", "/", "h", {}, None))
        with self.assertRaises(ValueError):
            _wire.request_bytes("GET", "/", "h", {"X-A": "a\r\nX-B: b"}, None)
        with self.assertRaises(ValueError):
            _wire.request_bytes("GET", "/", "h", {"X:A": "a"}, None)
        with self.assertRaises(http.client.InvalidURL):
            _wire.request_bytes("GET", "/a b", "h", {}, None)

    def test_host_header(self):
        for args, want in ((("h", 80, 80), "h"), (("h", 8080, 80), "h:8080"), (("::1", 443, 443), "[::1]"),
                           (("::1", 8443, 443), "[::1]:8443"), (("bücher.example", 80, 80), "xn--bcher-kva.example")):
            self.assertEqual(_wire.host_header(*args), want, args)


class TransportTest(StubClients, unittest.TestCase):
    """The kept connection's exchange on these answers, through Client."""

    def stub(self, *script):
        s = RawStub(*script)
        self.addCleanup(s.close)
        return s

    def test_one_write_a_request(self):
        s = self.stub([answer()])
        c = self.client(s.url)
        c.health()  # opens the connection
        conn = c._t._keepers[0].connection()
        writes = []

        class Recording:
            def __init__(self, sock):
                self.sock = sock

            def __getattr__(self, name):
                return getattr(self.sock, name)

            def sendall(self, data):
                writes.append(bytes(data))
                return self.sock.sendall(data)

        conn.sock = Recording(conn.sock)
        self.assertEqual(c.request("POST", "/v1/x", {"a": 1}), {"ok": True})
        self.assertEqual(len(writes), 1)
        self.assertTrue(writes[0].startswith(b"POST /v1/x HTTP/1.1\r\nHost: 127.0.0.1:"), writes[0])
        self.assertTrue(writes[0].endswith(b"\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n"
                                           b'{"a": 1}'), writes[0])
        self.assertEqual(s.requests[-1][1], writes[0])
        self.assertEqual([n for n, _ in s.requests], [1, 1])

    def test_chunked_and_split_answers(self):
        s = self.stub([b"HTTP/1.1 200 OK\r\nContent-Type: application/js", b"on\r\nTransfer-Encoding: chunked\r\n",
                       b"\r\n4\r\n{\"ok\r\n", b"8\r\n\": true}\r\n0\r\n\r\n"])
        c = self.client(s.url)
        for _ in range(3):
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
        self.assertEqual([n for n, _ in s.requests], [1, 1, 1])

    def test_connection_close_is_honoured(self):
        s = self.stub([answer(OK, b"Connection: close"), CLOSE], [answer()])
        c = self.client(s.url)
        with self.assertNoLogs("selfcma", "WARNING"):
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
            self.assertIsNone(c._t._keepers[0].connection().sock)  # closed after the answer
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
        self.assertEqual([n for n, _ in s.requests], [1, 2, 2])
        self.assertEqual(self.sleeps, [])

    def test_answer_cut_short_is_retried_when_idempotent(self):
        s = self.stub([answer()[:-4], CLOSE], [answer()])
        c = self.client(s.url)
        with self.assertLogs("selfcma", "WARNING") as logs:
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
        self.assertIn("IncompleteRead", logs.output[0])
        self.assertEqual(len(self.sleeps), 1)
        self.assertEqual([n for n, _ in s.requests], [1, 2])

    def test_answer_cut_short_is_not_retried_when_not_idempotent(self):
        s = self.stub([answer()[:-4], CLOSE], [answer()])
        c = self.client(s.url)
        with self.assertRaises(selfcma.ServerUnavailable) as cm:
            c.request("POST", "/v1/x", {}, idempotent=False)
        self.assertIn("not retried", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, http.client.IncompleteRead)
        self.assertEqual(len(s.requests), 1)

    def test_kept_connection_closed_before_the_answer_is_sent_again_at_once(self):
        # The server closed it while idle: the request is sent once more on
        # a new connection, without a backoff or a warning.
        s = self.stub([answer()], [CLOSE], [answer()])
        c = self.client(s.url)
        with self.assertNoLogs("selfcma", "WARNING"):
            c.health()
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
        self.assertEqual(self.sleeps, [])
        self.assertEqual([n for n, _ in s.requests], [1, 1, 2])

    def test_oversized_headers_are_refused(self):
        s = self.stub([answer(OK, b"X-Big: " + b"v" * _wire.MAX_HEADER_BYTES)])
        c = self.client(s.url, retries=1)
        with self.assertLogs("selfcma", "WARNING"), self.assertRaises(selfcma.ServerUnavailable) as cm:
            c.request("GET", "/v1/x")
        self.assertIsInstance(cm.exception.__cause__, http.client.LineTooLong)
        self.assertEqual(len(s.requests), 2)
        self.assertIsNone(c._t._keepers[0].connection().sock)

    def test_error_answer_headers(self):
        # Retry-After of any case; the error's body and status as before.
        err = json.dumps({"error": {"code": "storage_full", "message": "disk full"}}).encode()
        s = self.stub([answer(err, b"retry-after: 2", status=b"507 Insufficient Storage")], [answer()])
        c = self.client(s.url)
        with self.assertLogs("selfcma", "WARNING"):
            self.assertEqual(c.request("GET", "/v1/x"), {"ok": True})
        self.assertEqual(self.sleeps, [2.0])
        missing = json.dumps({"error": {"code": "not_found", "message": "no session x"}}).encode()
        s.script = [[answer(missing, status=b"404 Not Found")]]
        with self.assertRaises(selfcma.NotFound) as cm:
            c.request("GET", "/v1/x")
        self.assertEqual((cm.exception.status, cm.exception.message), (404, "no session x"))
        self.assertEqual([n for n, _ in s.requests], [1, 1, 1])

    def test_io_of_a_closed_connection_is_freed(self):
        s = self.stub([answer()])
        c = self.client(s.url)
        c.health()
        conn = c._t._keepers[0].connection()
        sock, reader = conn.sock, conn.reader
        self.assertIsInstance(reader, io.BufferedReader)
        c.close()
        self.assertIsNone(conn.reader)
        self.assertEqual(sock.fileno(), -1)  # closed for real, not held by the reader


if __name__ == "__main__":
    unittest.main()
