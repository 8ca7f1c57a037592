"""HTTP transport: JSON in and out, bearer token, bounded retries."""

from __future__ import annotations

import http.client
import io
import ipaddress
import json
import logging
import os
import random
import ssl
import threading
import time
import weakref
import urllib.error
import urllib.parse
import urllib.request
from email.utils import parsedate_to_datetime

from . import _wire
from ._convert import json_default
from .errors import ServerError, ServerUnavailable, error_from_answer

log = logging.getLogger("selfcma")

# Statuses a proxy or a restarting server answers; retried like a timeout,
# when the request is safe to send again (a 504's may have been processed).
RETRY_STATUSES = (408, 429, 502, 503, 504, 507)

# Statuses of a request the server did not apply (throttled, a full disk):
# retried whatever the request, honouring Retry-After.
NOT_APPLIED_STATUSES = (429, 507)

# Error codes of answers that say the request was not applied (the server
# was reading too many bodies, or this one came too slowly): retried
# whatever the request, as NOT_APPLIED_STATUSES.
NOT_APPLIED_CODES = ("overloaded", "body_too_slow")

# The longest Retry-After the client waits for; a longer one is waited this
# long before the retry.
MAX_RETRY_AFTER = 60.0

USER_AGENT = "selfcma-python"

# A kept connection idle longer than this is closed rather than used: a
# proxy or a NAT between may have dropped it without a word (the server's
# own idle timeout is two minutes), and a request sent on it would wait
# for its timeout.
MAX_IDLE = 30.0


def retry_after(value, now=None):
    """Seconds a Retry-After header asks to wait (delta-seconds or an
    HTTP-date), or None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        d = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        d = when.timestamp() - (time.time() if now is None else now)
    if d != d:  # NaN
        return None
    return max(0.0, d)


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refused(exc):
    """Whether exc says the connection was never made, so the request was
    not sent at all (safe to retry even when not idempotent)."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    return isinstance(reason, ConnectionRefusedError)


class _Kept:
    """A kept connection: http.client's connection opens its socket (TLS
    for https); the requests and answers on it are _wire's, read through
    one buffered reader of the socket. Its socket is closed when it is
    dropped (a thread's, when the thread ends)."""

    used = 0.0  # time.monotonic() at the end of its last answer
    busy = False  # a request on it is under way
    closing = False  # close() came while busy: closed after its answer
    reader = None  # the socket's buffered reader, while open
    _host = None  # the Host header's value

    def __del__(self):
        if getattr(self, "sock", None) is not None:
            self.close()

    def open(self):
        """Connects, if not open."""
        if self.sock is None:
            self.connect()
            self.reader = self.sock.makefile("rb")

    def close(self):
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.close()  # its reference to the socket, which super() then closes
        super().close()

    def host_header(self):
        if self._host is None:
            self._host = _wire.host_header(self.host, self.port, self.default_port)
        return self._host


class _HTTPConnection(_Kept, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Kept, http.client.HTTPSConnection):
    pass


class _Keeper:
    """The connections kept open to one server: one per thread (a thread
    waits for its answer, so one at a time), reused by the idempotent
    requests; after a fork the child opens its own."""

    def __init__(self, split, context):
        self.host = split.hostname
        # Always a port: without one http.client would read one off an
        # IPv6 address's last group.
        self.port = split.port or (443 if split.scheme == "https" else 80)
        self.prefix = split.path.rstrip("/")
        self.context = context
        self.local = threading.local()
        self.lock = threading.Lock()  # guards all, and busy and closing of its connections
        self.all = weakref.WeakSet()  # for close(); a dead thread's go with it
        _all_keepers.add(self)

    def connection(self):
        """This thread's connection (its socket opened by the first request)."""
        loc = self.local
        pid = os.getpid()
        conn = getattr(loc, "conn", None)
        if conn is None or loc.pid != pid:
            if conn is not None:
                # The parent's, copied by fork: never sent on here (closing
                # the child's copy leaves the parent's open).
                conn.close()
            if self.context is None:
                conn = _HTTPConnection(self.host, self.port)
            else:
                conn = _HTTPSConnection(self.host, self.port, context=self.context)
            loc.conn, loc.pid = conn, pid
            with self.lock:
                self.all.add(conn)
        elif conn.sock is not None and time.monotonic() - conn.used > MAX_IDLE:
            conn.close()
        return conn

    def exchange(self, method, suffix, data, headers, timeout):
        """One idempotent request on this thread's connection: (status,
        reason, headers, body), as _exchange."""
        conn = self.connection()
        with self.lock:
            conn.busy = True
        try:
            reused = conn.sock is not None
            try:
                return _exchange(conn, method, self.prefix + suffix, data, headers, timeout)
            except (ConnectionError, urllib.error.URLError) as e:
                why = e.reason if isinstance(e, urllib.error.URLError) else e
                if not reused or not isinstance(why, ConnectionError):
                    raise
            # The server closed the kept connection while it was idle (its
            # idle timeout, a restart): a new one, at once.
            return _exchange(conn, method, self.prefix + suffix, data, headers, timeout)
        finally:
            with self.lock:
                conn.busy = False
                if conn.closing:
                    conn.closing = False
                    conn.close()

    def close(self):
        """Closes the connections; one in use by its thread when its
        answer has come."""
        with self.lock:
            for conn in list(self.all):
                if conn.busy:
                    conn.closing = True
                else:
                    conn.close()


# Every _Keeper, whose lock a fork's child makes anew: another thread of
# the parent may have held it.
_all_keepers = weakref.WeakSet()


def _after_fork_in_child():
    for k in list(_all_keepers):
        k.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _exchange(conn, method, selector, data, headers, timeout):
    """One request on conn and its whole answer: (status, reason,
    headers, body). As urllib, an error while connecting or sending is
    raised as a URLError, one of the answer as it comes; either closes
    the connection (the next request opens a new one), as does an answer
    with Connection: close."""
    message = _wire.request_bytes(method, selector, conn.host_header(), headers, data)
    conn.timeout = timeout
    try:
        if conn.sock is not None and conn.sock.gettimeout() != timeout:
            conn.sock.settimeout(timeout)  # a system call: only when changed
        conn.open()
        conn.sock.sendall(message)
    except OSError as e:
        conn.close()
        raise urllib.error.URLError(e) from None
    except BaseException:
        conn.close()  # half sent (an interrupt): unusable
        raise
    try:
        status, reason, hdrs, body, close = _wire.read_answer(conn.reader, method)
    except BaseException:
        conn.close()
        raise
    if close:
        conn.close()
    conn.used = time.monotonic()
    return status, reason, hdrs, body


class Route:
    """The server a run of requests goes to (a session's): an index into
    the transport's URLs that moves on when that server stops answering,
    and stays there while the new one answers."""

    __slots__ = ("index",)

    def __init__(self, index=0):
        self.index = index

    def __repr__(self):
        return f"Route({self.index})"


def _urls(url):
    """The base URLs of url: one URL, several separated by commas or
    spaces, or a list or tuple of them."""
    if isinstance(url, str):
        parts = url.replace(",", " ").split()
    elif isinstance(url, (list, tuple)):
        parts = list(url)
        for u in parts:
            if not isinstance(u, str):
                raise TypeError(f"url {u!r}: want a string like http://host:port")
    else:
        raise TypeError(f"url is {type(url).__name__}: want a URL string, or a list of URLs of servers that share "
                        "one database")
    if not parts:
        raise ValueError("url is empty: want http://host:port")
    out = []
    for u in parts:
        u = u.strip()
        if "://" not in u:
            u = "http://" + u
        split = urllib.parse.urlsplit(u)
        if split.scheme not in ("http", "https") or not split.netloc:
            raise ValueError(f"url {u!r}: want http://host:port or https://host:port")
        try:
            split.port
        except ValueError as e:
            raise ValueError(f"url {u!r}: {e}") from None
        out.append((u.rstrip("/"), split))
    return out


class Transport:
    """Sends requests to one server, or to one of several that share a
    database (failing over from one that does not answer to the next).
    Thread-safe: each thread keeps a connection to each server open for
    the idempotent requests (most); a request that may not be sent twice
    opens its own, so that a connection the server closed while idle
    cannot fail it after it left."""

    def __init__(
        self, url, token=None, timeout=30.0, retries=8, backoff=0.25, max_backoff=8.0, sleep=time.sleep, cafile=None
    ):
        urls = _urls(url)
        if retries < 0:
            raise ValueError(f"retries {retries!r}: want >= 0")
        if cafile is not None:
            for u, parts in urls:
                if parts.scheme != "https":
                    raise ValueError(f"cafile {cafile!r} with url {u!r}: a CA file is for https:// only")
        self.urls = [u for u, _ in urls]
        self.timeout = timeout
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self._sleep = sleep
        self._random = random.Random()
        self._route = Route(0)  # the requests of no session, and where new sessions start
        self._headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._openers = {}
        ctx = None
        self._keepers = []
        proxies = urllib.request.getproxies()
        for u, parts in urls:
            host = parts.hostname or ""
            if not _is_loopback(host) and parts.scheme in proxies and not urllib.request.proxy_bypass(host):
                # Through the environment's proxy: urllib's way, a
                # connection a request.
                self._keepers.append(None)
                continue
            if parts.scheme == "https" and ctx is None:
                ctx = ssl.create_default_context(cafile=cafile)
            self._keepers.append(_Keeper(parts, ctx if parts.scheme == "https" else None))
        for u, parts in urls:
            key = (_is_loopback(parts.hostname or ""), parts.scheme == "https" and cafile is not None)
            if key not in self._openers:
                handlers = []
                if key[0]:
                    # Never send a request for this machine through a proxy
                    # of the environment.
                    handlers.append(urllib.request.ProxyHandler({}))
                if key[1]:
                    # Trust the certificates of cafile (a self-signed
                    # server's, or a private CA's) instead of the system's;
                    # still verified.
                    handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cafile)))
                self._openers[key] = urllib.request.build_opener(*handlers)
        self._opener_of = [self._openers[(_is_loopback(p.hostname or ""), p.scheme == "https" and cafile is not None)]
                           for _, p in urls]

    def close(self):
        """Closes the kept connections (a later request opens new ones)."""
        for k in self._keepers:
            if k is not None:
                k.close()

    def _send(self, at, method, suffix, data, headers, idempotent):
        """Sends the request to server at: (status, headers, body) of a
        2xx answer; raises urllib's HTTPError for another status, as the
        urllib path does."""
        keeper = self._keepers[at]
        url = self.urls[at] + suffix
        if keeper is not None and idempotent:
            status, reason, hdrs, body = keeper.exchange(method, suffix, data, headers, self.timeout)
            if 200 <= status < 300:
                return status, hdrs, body
            if not 300 <= status < 400:
                raise urllib.error.HTTPError(url, status, reason, hdrs, io.BytesIO(body))
            # A redirect (a proxy's): urllib follows it, as before.
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        with self._opener_of[at].open(req, timeout=self.timeout) as resp:
            return resp.status, resp.headers, resp.read()

    @property
    def url(self):
        """The server new sessions and the requests of no session go to."""
        return self.urls[self._route.index]

    def route(self):
        """A Route for a new session: it starts on the server the client
        uses now."""
        return Route(self._route.index)

    def delay(self, attempt):
        """Seconds to wait before retry number attempt (1, 2, ...):
        exponential from backoff, capped at max_backoff, with jitter."""
        d = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return d * (0.5 + 0.5 * self._random.random())

    def _fail_over(self, route):
        """Moves route to the next server; the client's own route follows
        when it was on the same one, so that new sessions avoid it."""
        old = route.index
        route.index = (old + 1) % len(self.urls)
        if route is not self._route and self._route.index == old:
            self._route.index = route.index
        return route.index

    def request(self, method, path, body=None, query=None, idempotent=True, raw=False, headers=None, route=None):
        """Sends one request and returns the decoded answer: the JSON value,
        the text of a non-JSON answer, or None for an empty one; with
        ``raw``, the bytes of the answer as they came. ``headers`` are sent
        besides the client's own.

        Connection failures, timeouts and 408/502/503/504 are retried up to
        ``retries`` times with backoff when the request is idempotent;
        otherwise only a refused connection is retried (the request was not
        sent). 429 (throttled), 507 (storage_full: the server's disk is
        full) and the server's 503 ``overloaded`` and 408
        ``body_too_slow`` are retried whatever the request, since the
        server applied nothing. An answer's Retry-After (seconds or a date, at most
        MAX_RETRY_AFTER) replaces the backoff before the retry. Raises the
        SelfCMAError subclass of an error answer, or ServerUnavailable
        (StorageFull, Throttled for 507 and 429) when the tries are used up.

        With several servers, ``route`` (a Route; None: the client's own)
        says which one to send to. A failure that would be retried, other
        than 429 and 507, sends the request to the next server at once, and
        the route stays there; the backoff and the count of ``retries``
        apply to each round over all the servers.
        """
        route = route if route is not None else self._route
        suffix = path
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                suffix += "?" + urllib.parse.urlencode(q)
        data = None
        headers = dict(self._headers, **(headers or {}))
        if body is not None:
            data = json.dumps(body, allow_nan=False, default=json_default).encode("utf-8")
            headers["Content-Type"] = "application/json"
        attempt = hops = 0
        while True:
            at = route.index
            url = self.urls[at] + suffix
            failure = problem = wait = None
            try:
                status, hdrs, answer = self._send(at, method, suffix, data, headers, idempotent)
                if raw:
                    return answer
                return _decode(answer, hdrs.get("Content-Type", ""), method, url, status)
            except urllib.error.HTTPError as e:
                # The answer has a name of its own: data is the request's
                # body, sent again by a retry.
                try:
                    answer = e.read()
                except (OSError, http.client.HTTPException):
                    answer = b""
                finally:
                    e.close()
                if e.code not in RETRY_STATUSES:
                    raise error_from_answer(e.code, answer, method=method, url=url, reason=e.reason) from None
                failure = e
                problem = error_from_answer(e.code, answer, method=method, url=url, reason=e.reason)
                not_applied = e.code in NOT_APPLIED_STATUSES or getattr(problem, "code", None) in NOT_APPLIED_CODES
                retryable = idempotent or not_applied
                what = f"{e.code} {problem.message}"
                status = e.code
                wait = retry_after(e.headers.get("Retry-After") if e.headers is not None else None)
            except (OSError, http.client.HTTPException) as e:
                # URLError (refused, unreachable), resets, timeouts, a
                # connection closed without an answer.
                if isinstance(e, urllib.error.URLError) and not isinstance(e.reason, OSError):
                    raise ServerUnavailable(
                        f"cannot reach the server: {e.reason}", method=method, url=url
                    ) from e
                reason = e.reason if isinstance(e, urllib.error.URLError) else e
                if isinstance(reason, ssl.SSLCertVerificationError):
                    # Not a passing failure: trying again cannot help.
                    raise ServerUnavailable(
                        f"the server's certificate is not trusted: {reason.verify_message or reason}"
                        " (Client(..., cafile=...) trusts a self-signed one)",
                        method=method,
                        url=url,
                    ) from e
                failure = e
                retryable = idempotent or _refused(e)
                what = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
                status = None
            if retryable and len(self.urls) > 1 and status not in NOT_APPLIED_STATUSES:
                # Another server shares the database: try it now, and stay
                # there. A round over all of them counts as one try.
                hops += 1
                nxt = self._fail_over(route)
                if hops % len(self.urls):
                    log.warning("selfcma: %s %s: %s; trying %s", method, url, what, self.urls[nxt])
                    continue
            attempt += 1
            if not retryable or attempt > self.retries:
                if problem is not None and status in NOT_APPLIED_STATUSES:
                    problem.message = f"{problem.message} (after {attempt} tries)"
                    problem.args = (problem.message,)
                    raise problem from failure
                tries = f"{attempt} tries" if len(self.urls) == 1 else f"{attempt} rounds of {len(self.urls)} servers"
                if retryable:
                    msg = f"no answer after {tries}: {what}"
                else:
                    msg = f"{what}; not retried: the request may or may not have been applied"
                raise ServerUnavailable(msg, method=method, url=url, status=status) from failure
            d = self.delay(attempt) if wait is None else min(wait, MAX_RETRY_AFTER)
            log.warning("selfcma: %s %s: %s; retry %d of %d in %.2f s", method, url, what, attempt, self.retries, d)
            self._sleep(d)


def _decode(raw, ctype, method, url, status):
    if not raw:
        return None
    if "json" in ctype or not ctype:
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as e:
            if "json" in ctype:
                raise ServerError(f"the answer is not valid JSON: {e}", method=method, url=url, status=status) from e
    return raw.decode("utf-8", "replace")
