"""HTTP/1.1 on a kept connection's socket, without http.client's work per
request (six putheader calls, a file object and email's header parser an
answer): a request's bytes built at once and sent in one write, its answer
read from the connection's buffered reader. Errors are http.client's: an
answer cut short raises IncompleteRead, none at all RemoteDisconnected (a
ConnectionResetError), a bad status line BadStatusLine, headers over
MAX_HEADER_BYTES LineTooLong."""

from __future__ import annotations

import http.client
import re

# The status line and the headers of an answer, at most (the server's are
# a few hundred bytes).
MAX_HEADER_BYTES = 65536
MAX_HEADERS = 100  # as http.client
MAX_LINE = 65536  # a chunk's size line, a trailer's line

# As http.client checks a request's path and headers: no control
# characters, spaces or non-ASCII in the path; no line break in a value
# that does not continue it.
_bad_path = re.compile("[\x00-\x20\x7f-\U0010ffff]").search
_legal_name = re.compile(r"[^:\s][^:\r\n]*").fullmatch
_bad_value = re.compile(r"\n(?![ \t])|\r(?![ \t\n])").search

_BODY_METHODS = ("PATCH", "POST", "PUT")  # Content-Length: 0 without a body, as http.client


class Headers(dict):
    """An answer's headers, by lower-case name (the first of a repeated
    one); get and [] take any case, and [] answers None for a missing one,
    as http.client's message."""

    __slots__ = ()

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name):
        return dict.get(self, name.lower())

    def __contains__(self, name):
        return dict.__contains__(self, name.lower())


def host_header(host, port, default_port):
    """The Host header's value, as http.client writes it."""
    try:
        host.encode("ascii")
    except UnicodeEncodeError:
        host = host.encode("idna").decode("ascii")
    if ":" in host:
        host = f"[{host}]"
    return host if port == default_port else f"{host}:{port}"


def request_bytes(method, selector, host, headers, body):
    """A request's bytes: its line, the Host and Accept-Encoding headers
    http.client sends, headers, Content-Length, body. Raises InvalidURL or
    ValueError, as http.client, for a path or header that would break the
    request's framing."""
    if _bad_path(selector):
        raise http.client.InvalidURL(f"URL can't contain control characters. {selector!r}")
    lines = [f"{method} {selector} HTTP/1.1", "Host: " + host, "Accept-Encoding: identity"]
    for name, value in headers.items():
        value = str(value)
        if not _legal_name(name):
            raise ValueError(f"Invalid header name {name!r}")
        if _bad_value(value):
            raise ValueError(f"Invalid header value {value!r}")
        lines.append(f"{name}: {value}")
    if body is not None or method in _BODY_METHODS:
        lines.append(f"Content-Length: {len(body) if body is not None else 0}")
    lines.append("\r\n")
    head = "\r\n".join(lines).encode("latin-1")
    return head + body if body else head


def read_answer(reader, method):
    """The next answer on reader (1xx answers skipped): (status, reason,
    headers, body, close), close when the connection ends with it."""
    while True:
        version, status, reason = _status_line(reader)
        headers = _headers(reader)
        if status >= 200:
            break
    body, close = _body(reader, method, status, headers)
    return status, reason, headers, body, close or _closes(version, headers)


def _status_line(reader):
    """(version, status, reason) of the status line, as http.client reads it."""
    line = reader.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise http.client.LineTooLong("status line")
    if not line:
        raise http.client.RemoteDisconnected("Remote end closed connection without response")
    text = line.decode("latin-1")
    parts = text.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise http.client.BadStatusLine(text)
    version = parts[0]
    try:
        status = int(parts[1])
    except ValueError:
        raise http.client.BadStatusLine(text) from None
    if not 100 <= status <= 999:
        raise http.client.BadStatusLine(text)
    if not version.startswith("HTTP/1."):
        raise http.client.UnknownProtocol(version)
    return version, status, parts[2].strip() if len(parts) > 2 else ""


def _headers(reader):
    """The header lines up to the blank line, into Headers; a folded line
    continues the value before it."""
    headers = Headers()
    left, count, name = MAX_HEADER_BYTES, 0, None
    while True:
        line = reader.readline(left + 1)
        left -= len(line)
        if left < 0:
            raise http.client.LineTooLong(f"headers (more than {MAX_HEADER_BYTES} bytes)")
        if not line.endswith(b"\n"):
            raise http.client.IncompleteRead(line)  # the connection ended within the headers
        if line in (b"\r\n", b"\n"):
            return headers
        count += 1
        if count > MAX_HEADERS:
            raise http.client.HTTPException(f"got more than {MAX_HEADERS} headers")
        text = line.decode("latin-1")
        if text[0] in " \t":
            if name is not None:
                dict.__setitem__(headers, name, f"{dict.get(headers, name)} {text.strip()}")
            continue
        key, colon, value = text.partition(":")
        key = key.strip().lower()
        name = key if colon and not dict.__contains__(headers, key) else None
        if name is not None:
            dict.__setitem__(headers, name, value.strip())


def _body(reader, method, status, headers):
    """(body, close): by Content-Length, chunked, or up to the end of the
    connection when the answer says neither (close)."""
    if status in (204, 304) or method == "HEAD":
        return b"", False
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return _chunked(reader), False
    length = _length(headers.get("content-length"))
    if length is None:
        return reader.read(), True
    body = reader.read(length)
    if len(body) < length:
        raise http.client.IncompleteRead(body, length - len(body))
    return body, False


def _length(value):
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def _chunked(reader):
    """A chunked body, its trailer read and dropped."""
    parts = []
    while True:
        line = reader.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong("chunk size")
        try:
            n = int(line.split(b";", 1)[0], 16)
        except ValueError:
            n = -1
        if n < 0:
            raise http.client.IncompleteRead(b"".join(parts))
        if n == 0:
            break
        chunk = reader.read(n)
        if len(chunk) < n:
            raise http.client.IncompleteRead(b"".join(parts) + chunk, n - len(chunk))
        parts.append(chunk)
        if len(reader.read(2)) < 2:  # the chunk's CRLF
            raise http.client.IncompleteRead(b"".join(parts))
    while True:  # the trailer, up to its blank line
        line = reader.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong("trailer line")
        if line in (b"\r\n", b"\n", b""):
            return b"".join(parts)


def _closes(version, headers):
    """Whether the server closes the connection after this answer, as
    http.client decides it."""
    conn = (headers.get("connection") or "").lower()
    if version != "HTTP/1.0":
        return "close" in conn
    return not ("keep-alive" in conn or headers.get("keep-alive"))
