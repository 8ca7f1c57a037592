package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

const specPath = "../../api/openapi.yaml"

var spec struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// loadSpec parses and validates api/openapi.yaml once.
func loadSpec(tb testing.TB) (*openapi3.T, routers.Router) {
	tb.Helper()
	spec.once.Do(func() {
		l := openapi3.NewLoader()
		spec.doc, spec.err = l.LoadFromFile(specPath)
		if spec.err != nil {
			return
		}
		if spec.err = spec.doc.Validate(context.Background()); spec.err != nil {
			return
		}
		spec.router, spec.err = gorillamux.NewRouter(spec.doc)
	})
	if spec.err != nil {
		tb.Fatalf("api/openapi.yaml: %v", spec.err)
	}
	return spec.doc, spec.router
}

// testServer is the real router over a bbolt store in a temporary file.
type testServer struct {
	*httptest.Server
	mux   *chi.Mux
	srv   *server
	m     *session.Manager
	token string
}

type serverOpts struct {
	token   string
	maxBody int64
	// maxInflight is Config.MaxInflightBytes.
	maxInflight int64
	// minRate and grace are Config.MinBodyRate and Config.BodyGrace.
	minRate int64
	grace   time.Duration
	limits  session.Limits
	sync    bool // fsync every commit (as the server does)

	noMetrics bool // no Config.Metrics (as cmd/server, the test servers keep metrics)

	wrapStore func(session.Store) session.Store // when not nil, the Manager's store is wrapStore(the bbolt store)
	log       io.Writer                         // when not nil, the server logs to it as text
}

func newTestServer(tb testing.TB, o serverOpts) *testServer {
	tb.Helper()
	st, err := bolt.Open(filepath.Join(tb.TempDir(), "t.db"), &bolt.Options{NoSync: !o.sync})
	if err != nil {
		tb.Fatal(err)
	}
	var ms session.Store = st
	if o.wrapStore != nil {
		ms = o.wrapStore(st)
	}
	m := session.NewManager(ms, session.Options{Limits: o.limits})
	var reg *prometheus.Registry
	if !o.noMetrics {
		reg = prometheus.NewRegistry()
	}
	var log *slog.Logger
	if o.log != nil {
		log = slog.New(slog.NewTextHandler(o.log, nil))
	}
	srv, mux := newServer(Config{Manager: m, Token: o.token, MaxBodyBytes: o.maxBody, MaxInflightBytes: o.maxInflight, MinBodyRate: o.minRate, BodyGrace: o.grace, Backup: st.Snapshot, Metrics: reg, Logger: log})
	ts := &testServer{Server: httptest.NewServer(mux), mux: mux, srv: srv, m: m, token: o.token}
	tb.Cleanup(func() {
		ts.Close()
		st.Close()
	})
	return ts
}

type call struct {
	method, path string
	body         any               // string or []byte sent as is; anything else as JSON
	header       map[string]string // extra headers; "Authorization": "" removes the token
	invalid      bool              // the request is meant to break the contract: validate the response only
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends c and checks the request (unless c.invalid) and the response
// against the spec.
func (ts *testServer) do(tb testing.TB, c call) response {
	tb.Helper()
	_, router := loadSpec(tb)
	var body []byte
	switch b := c.body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			tb.Fatal(err)
		}
	}
	req, err := http.NewRequest(c.method, ts.URL+c.path, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	rb, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		tb.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: rb}
	checkContract(tb, router, c, req.Header, body, r)
	return r
}

// checkContract validates a request and its response against the spec.
func checkContract(tb testing.TB, router routers.Router, c call, h http.Header, body []byte, r response) {
	tb.Helper()
	ctx := context.Background()
	// The spec's server is http://127.0.0.1:8080.
	vreq, err := http.NewRequest(c.method, "http://127.0.0.1:8080"+c.path, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	vreq.Header = h.Clone()
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		if r.status == http.StatusNotFound || r.status == http.StatusMethodNotAllowed {
			return // a route the spec does not have, answered so
		}
		tb.Fatalf("%s %s: not in the spec: %v", c.method, c.path, err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	if !c.invalid {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			tb.Fatalf("%s %s: request breaks the spec: %v", c.method, c.path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.status, Header: r.header, Options: opts}
	out.SetBodyBytes(r.body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		tb.Fatalf("%s %s: response %d breaks the spec: %v\n%s", c.method, c.path, r.status, err, r.body)
	}
}

func decode[T any](tb testing.TB, r response) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		tb.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

// Client-side views of the responses.
type sessionView struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	Generation     int    `json:"generation"`
	Evaluations    int    `json:"evaluations"`
	PopulationSize int    `json:"population_size"`
	Seed           uint64 `json:"seed"`
	Best           *struct {
		X []float64 `json:"x"`
		F float64   `json:"f"`
	} `json:"best"`
}

type batchView struct {
	Generation int         `json:"generation"`
	Candidates [][]float64 `json:"candidates"`
}

type errorView struct {
	Error struct {
		Code       string `json:"code"`
		Message    string `json:"message"`
		Generation *int   `json:"generation"`
	} `json:"error"`
}

func sphere(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

func sphereTell(b batchView) map[string]any {
	f := make([]float64, len(b.Candidates))
	for i, x := range b.Candidates {
		f[i] = sphere(x)
	}
	return map[string]any{"generation": b.Generation, "fitness": f}
}

func (ts *testServer) create(tb testing.TB, body any) sessionView {
	tb.Helper()
	r := ts.do(tb, call{method: "POST", path: "/v1/sessions", body: body})
	if r.status != http.StatusCreated {
		tb.Fatalf("create: %d %s", r.status, r.body)
	}
	return decode[sessionView](tb, r)
}

func (ts *testServer) ask(tb testing.TB, id string) batchView {
	tb.Helper()
	r := ts.do(tb, call{method: "GET", path: "/v1/sessions/" + id + "/ask"})
	if r.status != http.StatusOK {
		tb.Fatalf("ask: %d %s", r.status, r.body)
	}
	return decode[batchView](tb, r)
}

func (ts *testServer) tell(tb testing.TB, id string, body any) sessionView {
	tb.Helper()
	r := ts.do(tb, call{method: "POST", path: "/v1/sessions/" + id + "/tell", body: body})
	if r.status != http.StatusOK {
		tb.Fatalf("tell: %d %s", r.status, r.body)
	}
	return decode[sessionView](tb, r)
}

func hasPrefixAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if s == strings.TrimSuffix(p, "/") || strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
