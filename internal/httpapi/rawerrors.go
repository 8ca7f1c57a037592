package httpapi

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"

	"github.com/selfcma/selfcma/internal/session"
)

// JSONErrors wraps a listener so that the errors net/http answers by
// itself, before any handler runs (a header value with a control byte, a
// malformed request line, headers over the limit), are JSON like every
// other error: {"error": {"code": "invalid" (431: "too_large"),
// "message": net/http's text}}. The connection is closed after them, as
// net/http does. Plain HTTP only: under TLS net/http writes to the
// *tls.Conn, which this does not see.
func JSONErrors(l net.Listener) net.Listener { return jsonErrorsListener{l} }

type jsonErrorsListener struct{ net.Listener }

func (l jsonErrorsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorsConn{Conn: c}, nil
}

// jsonErrorsConn rewrites net/http's own error answers, which it writes in
// one Write: "HTTP/1.1 <status>" + rawErrorHeaders + text.
type jsonErrorsConn struct {
	net.Conn
}

// rawErrorHeaders is what net/http writes between the status line and the
// text of the errors it answers itself (net/http's errorHeaders).
const rawErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *jsonErrorsConn) Write(b []byte) (int, error) {
	if out, ok := rawErrorJSON(b); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// rawErrorJSON returns net/http's error answer b as a JSON one, ok false
// if b is not one.
func rawErrorJSON(b []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(b, []byte(proto)) || len(b) < len(proto)+3 {
		return nil, false
	}
	i := bytes.Index(b, []byte(rawErrorHeaders))
	if i < 0 || bytes.IndexByte(b[:i], '\n') >= 0 {
		return nil, false // not right after the status line: a handler's answer
	}
	status, err := strconv.Atoi(string(b[len(proto) : len(proto)+3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	code := statusCode(status)
	body, _ := json.Marshal(errorJSON{Error: errorBody{Code: code, Message: string(b[i+len(rawErrorHeaders):])}})
	body = append(body, '\n')
	out := make([]byte, 0, 160+len(body))
	out = append(out, proto...)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(status)...)
	out = append(out, "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, body...), true
}

// statusCode is the error code of an answer net/http makes itself.
func statusCode(status int) string {
	if status == http.StatusRequestHeaderFieldsTooLarge {
		return codeTooLarge
	}
	return string(session.CodeInvalid)
}
