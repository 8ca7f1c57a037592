"""The exceptions of the selfcma client, keyed on the server's error codes.

Every error the server answers is ``{"error": {"code": ..., "message": ...}}``
with a status (api/openapi.yaml). The client raises the class of the code::

    SelfCMAError                    base; .code .message .method .url .status
    ├── InvalidRequest(ValueError)  400 invalid, 405 method_not_allowed
    │   ├── OutOfRange              422 out_of_range
    │   └── TooLarge                413 too_large
    ├── Unauthorized                401 unauthorized
    ├── Throttled                   429 (too many requests), after the retries
    ├── NotFound(LookupError)       404 not_found
    ├── Conflict                    409 conflict (.generation: the pending one)
    │   └── Stopped                 409 stopped (.stop_reasons)
    ├── ServerError                 500 internal, any other 5xx
    │   ├── StorageFull             507 storage_full (the server's disk is full), after the retries
    │   └── ServerUnavailable(ConnectionError)
    │                               no answer (or 502/503/504) after the retries
    ├── EvaluationError(RuntimeError)
    │                               optimize: every evaluation failed, generations in a row
    └── Unsupported(NotImplementedError)
                                    what pycma does that the service cannot (es.C, setting
                                    es.sigma, noise_handler), with the way to do it here

An answer whose body is not such an error (a proxy's HTML page) is mapped by
its status alone, with ``code`` None.
"""

from __future__ import annotations

import json

__all__ = [
    "SelfCMAError",
    "InvalidRequest",
    "OutOfRange",
    "TooLarge",
    "Unauthorized",
    "NotFound",
    "Conflict",
    "Stopped",
    "ServerError",
    "ServerUnavailable",
    "StorageFull",
    "Throttled",
    "EvaluationError",
    "Unsupported",
    "error_from_answer",
]


class SelfCMAError(Exception):
    """An error answered by the server (or the absence of an answer).

    Attributes:
        code: the server's error code (``"invalid"``, ``"not_found"``, ...),
            or None when the answer carried none.
        message: the server's message, or a description of the failure.
        method, url: the request that failed.
        status: the HTTP status, or None when no answer came.
        details: the other fields of the error object (``generation``,
            ``stop_reasons``), as the server wrote them.
    """

    def __init__(self, message, *, code=None, method=None, url=None, status=None, details=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.method = method
        self.url = url
        self.status = status
        self.details = dict(details or {})

    def __str__(self):
        where = " ".join(p for p in (self.method, self.url) if p)
        head = []
        if self.status is not None:
            head.append(str(self.status))
        if self.code:
            head.append(self.code)
        text = self.message
        if head:
            text = f"{' '.join(head)}: {text}"
        if where:
            text = f"{text} ({where})"
        return text

    def __reduce__(self):
        return (_rebuild, (type(self), self.message, self.code, self.method, self.url, self.status, self.details))


def _rebuild(cls, message, code, method, url, status, details):
    return cls(message, code=code, method=method, url=url, status=status, details=details)


class InvalidRequest(SelfCMAError, ValueError):
    """400 ``invalid`` (the request is not of the documented shape), or a
    status of bad input without a more precise class (405)."""


class OutOfRange(InvalidRequest):
    """422 ``out_of_range``: a well-formed value outside its range or
    inconsistent with the others or with the session (σ0 ≤ 0, fitness of
    the wrong length, ...)."""


class TooLarge(InvalidRequest):
    """413 ``too_large``: the request body is over the server's limit."""


class Unauthorized(SelfCMAError):
    """401 ``unauthorized``: the server has a token and the request carried
    none, or another one (``Client(..., token=...)``)."""


class NotFound(SelfCMAError, LookupError):
    """404 ``not_found``: no such session."""


class Conflict(SelfCMAError):
    """409 ``conflict``: a tell of another generation than the pending one
    (another client told it first). ``generation`` is the pending one."""

    @property
    def generation(self):
        return self.details.get("generation")


class Stopped(Conflict):
    """409 ``stopped``: ask or tell of a stopped session.

    ``stop_reasons`` maps each criterion that stopped it to its value, as
    ``Session.stop()`` does.
    """

    @property
    def stop_reasons(self):
        return {r.get("name"): r.get("value") for r in self.details.get("stop_reasons") or []}


class ServerError(SelfCMAError):
    """500 ``internal`` or another 5xx: a fault of the server."""


class StorageFull(ServerError):
    """507 ``storage_full``: the server could not write for lack of disk
    space and changed nothing. The client retries it (honouring
    Retry-After) within its retry budget before raising this."""


class Throttled(SelfCMAError):
    """429: the server refused the request for now (too many at once, or
    too many failed logins from this address); retried, honouring
    Retry-After, before this is raised."""


class EvaluationError(SelfCMAError, RuntimeError):
    """Raised by optimize when every evaluation of several generations in a
    row failed without an exception of the objective to re-raise (it
    returned None or NaN every time)."""


class Unsupported(SelfCMAError, NotImplementedError):
    """A pycma feature the service does not have (``es.C`` of a session of
    more than 200 coordinates, setting ``es.sigma``, ``noise_handler``);
    raised by the client with what to do instead."""


class ServerUnavailable(ServerError, ConnectionError):
    """No answer (connection refused or reset, timeout) or 502/503/504, still
    after the client's bounded retries. ``status`` is the last status seen,
    None when no answer came; ``__cause__`` the last exception."""


_BY_CODE = {
    "invalid": InvalidRequest,
    "method_not_allowed": InvalidRequest,
    "out_of_range": OutOfRange,
    "too_large": TooLarge,
    "unauthorized": Unauthorized,
    "not_found": NotFound,
    "conflict": Conflict,
    "stopped": Stopped,
    "internal": ServerError,
    "storage_full": StorageFull,
}

_BY_STATUS = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Unauthorized,
    404: NotFound,
    405: InvalidRequest,
    409: Conflict,
    413: TooLarge,
    422: OutOfRange,
    429: Throttled,
    507: StorageFull,
}


def error_from_answer(status, body, *, method=None, url=None, reason=None):
    """The exception for an error answer: ``status`` and the raw ``body``
    (bytes). The server's code decides the class; without one, the status."""
    code, message, details = None, None, {}
    try:
        obj = json.loads(body.decode("utf-8")) if body else None
        err = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(err, dict) and isinstance(err.get("code"), str):
            code = err["code"]
            message = str(err.get("message", ""))
            details = {k: v for k, v in err.items() if k not in ("code", "message")}
    except (ValueError, UnicodeDecodeError, AttributeError):
        pass
    if message is None:
        text = body.decode("utf-8", "replace").strip() if body else ""
        message = text[:200] or reason or "HTTP error"
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else SelfCMAError
    return cls(message, code=code, method=method, url=url, status=status, details=details)
