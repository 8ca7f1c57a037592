"""HTTP transport: JSON in and out, bearer token, bounded retries."""

from __future__ import annotations

import http.client
import ipaddress
import json
import logging
import random
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from email.utils import parsedate_to_datetime

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
        out.append((u.rstrip("/"), split))
    return out


class Transport:
    """Sends requests to one server, or to one of several that share a
    database (failing over from one that does not answer to the next).
    Thread-safe: every request opens its own connection."""

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
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            failure = problem = wait = None
            try:
                with self._opener_of[at].open(req, timeout=self.timeout) as resp:
                    answer = resp.read()
                    ctype = resp.headers.get("Content-Type", "")
                if raw:
                    return answer
                return _decode(answer, ctype, method, url, resp.status)
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
