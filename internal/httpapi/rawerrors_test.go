package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestJSONErrors: the errors net/http answers before any handler runs (an
// Idempotency-Key with a control byte, a malformed request line) are JSON
// behind JSONErrors, like every other error; the handlers' answers pass
// as they are.
func TestJSONErrors(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ts.mux, ReadHeaderTimeout: time.Minute}
	go srv.Serve(JSONErrors(ln))
	defer srv.Close()
	for _, tc := range []struct {
		name, request string
		status        int
		code          string
	}{
		{"control byte in Idempotency-Key", "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: a\x01b\r\nContent-Length: 2\r\n\r\n{}", 400, "invalid"},
		{"malformed request line", "NONSENSE\r\n\r\n", 400, "invalid"},
		{"a handler's 400", "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 400, "invalid"},
		{"a handler's 404", "GET /v1/sessions/none HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Minute))
			fmt.Fprint(c, tc.request)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e errorView
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("the answer is not JSON: %v", err)
			}
			if resp.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Message == "" ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%d %q %+v, want %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), e, tc.status, tc.code)
			}
		})
	}
}
