package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/api"
	"github.com/selfcma/selfcma/internal/session"
)

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// openAPIETag is the entity tag of api/openapi.yaml as built in.
var openAPIETag = func() string {
	h := sha256.Sum256(api.OpenAPI)
	return `"` + hex.EncodeToString(h[:8]) + `"`
}()

// openAPI serves the contract this server was built with (If-None-Match
// answers 304 when it has not changed).
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("ETag", openAPIETag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(api.OpenAPI))
}

// errMediaType answers a body that is not JSON.
var errMediaType = &apiError{code: codeMediaType, msg: "the body must be JSON: send Content-Type: application/json"}

func (s *server) create(w http.ResponseWriter, r *http.Request) {
	if !jsonBody(r) {
		s.writeError(w, r, errMediaType)
		return
	}
	p, err := decodeCreate(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p.IdempotencyKey = idempotencyKey(r.Header.Get("Idempotency-Key"))
	if cost := s.createCharge(r.Context(), p); cost > 0 {
		release, ok := s.creates.take(r.Context(), cost, createWait)
		if !ok {
			w.Header().Set("Retry-After", "5")
			s.writeError(w, r, &apiError{code: codeOverloaded, msg: "the server is building as many sessions as its memory allows: try again shortly"})
			return
		}
		defer release()
	}
	sess, created, err := s.m.CreateIdempotent(r.Context(), p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID)
	if !created {
		w.Header().Set("Idempotent-Replayed", "true")
		s.writeSession(w, r, http.StatusOK, sess)
		return
	}
	s.writeSession(w, r, http.StatusCreated, sess)
}

// createCharge is what the create of p takes from the create budget while
// it runs: the cost of its dimension, which a warm start without x0 takes
// from its source session (learned by reading it, as the create will); if
// that cannot be read, the largest dimension allowed, so that no create
// builds a state unaccounted. A create that will be refused for its
// dimension takes nothing.
func (s *server) createCharge(ctx context.Context, p session.CreateParams) int64 {
	maxN := s.m.Limits().DimensionLimit(p.Algorithm)
	n := len(p.X0) + len(p.Integers) + len(p.Categories)
	if n == 0 && p.WarmStart != "" {
		n = maxN
		if src, err := s.m.Get(ctx, p.WarmStart); err == nil {
			n = src.Dimension
		}
	}
	if n == 0 || n > maxN {
		return 0
	}
	return createCost(p, n)
}

// idempotencyKey is the key of an Idempotency-Key header, as is or in the
// double quotes of the IETF draft's structured-field string.
func idempotencyKey(h string) string {
	if len(h) >= 2 && h[0] == '"' && h[len(h)-1] == '"' {
		return h[1 : len(h)-1]
	}
	return h
}

// Limits of GET /v1/sessions.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
)

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", defaultListLimit, 1, maxListLimit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	got, err := s.m.List(r.Context(), q.Get("after"), limit+1)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := listJSON{Sessions: make([]summaryJSON, 0, len(got))}
	for i, sum := range got {
		if i == limit {
			out.Next = got[i-1].ID
			break
		}
		out.Sessions = append(out.Sessions, toSummaryJSON(sum))
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// intParam reads an optional integer query parameter in [lo, hi].
func intParam(v, name string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, invalid("%s %q is not an integer", name, v)
	}
	if n < lo || n > hi {
		return 0, &session.Error{Code: session.CodeOutOfRange, Message: name + " " + v + " is out of range [" + strconv.Itoa(lo) + ", " + strconv.Itoa(hi) + "]"}
	}
	return n, nil
}

func (s *server) get(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	sess, err := s.m.Get(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := sessionObject(sess)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if sess.Status == session.StatusRunning {
		// The claims' leases of the pending generation, if any runs:
		// while no candidate is free, claims wait for the first to end.
		v, err := s.m.Leases(r.Context(), id)
		switch {
		case err != nil:
			s.log.WarnContext(r.Context(), "leases not read", "request_id", requestID(r.Context()), "session_id", id, "error", err)
		case v.Held > 0:
			body = appendLeases(body[:len(body)-1], v)
		}
	}
	s.writeBody(w, http.StatusOK, append(body, '\n'))
}

// appendLeases appends ,"leases":{...}} to the session object b without
// its closing brace.
func appendLeases(b []byte, v session.LeaseView) []byte {
	b = append(b, `,"leases":{"generation":`...)
	b = strconv.AppendInt(b, int64(v.Generation), 10)
	b = append(b, `,"held":`...)
	b = strconv.AppendInt(b, int64(v.Held), 10)
	b = append(b, `,"free":`...)
	b = strconv.AppendInt(b, int64(v.Free), 10)
	b = append(b, `,"next_expiry":`...)
	if v.NextExpiry.IsZero() {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, v.NextExpiry.UTC().Format(time.RFC3339Nano))
	}
	return append(b, "}}"...)
}

func (s *server) stop(w http.ResponseWriter, r *http.Request) {
	if err := emptyOrJSON(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, err := s.m.Stop(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeSession(w, r, http.StatusOK, sess)
}

// claim leases one candidate of the pending generation to a worker, for
// lease seconds (default a minute): {"generation", "index", "x",
// "expires_at"}, with index and x null when every candidate without a
// value is leased (expires_at is then when the first lease runs out). A
// worker that names itself (?worker=) gets its running lease again; so
// does a claim without a worker that repeats an Idempotency-Key, which
// names its lease's worker.
func (s *server) claim(w http.ResponseWriter, r *http.Request) {
	lease, err := intParam(r.URL.Query().Get("lease"), "lease", int(session.DefaultLease/time.Second), 1, int(session.MaxLease/time.Second))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, id, d := r.URL.Query(), chi.URLParam(r, "id"), time.Duration(lease)*time.Second
	worker := q.Get("worker")
	if key := idempotencyKey(r.Header.Get("Idempotency-Key")); key != "" && worker == "" {
		if len(key) > session.MaxWorkerID {
			s.writeError(w, r, invalid("Idempotency-Key of %d bytes: a claim's key names its lease's worker, at most %d bytes", len(key), session.MaxWorkerID))
			return
		}
		worker = key
	}
	var c session.Claim
	switch gs, is := q.Get("generation"), q.Get("index"); {
	case gs == "" && is == "":
		c, err = s.m.Claim(r.Context(), id, d, worker)
	case gs == "" || is == "":
		err = invalid("generation and index go together (the candidate whose lease to renew)")
	default:
		var g, i int
		if g, i, err = candidateParams(gs, is); err == nil {
			c, err = s.m.Renew(r.Context(), id, g, i, d, worker)
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, s.claimObject(r, id, c))
}

// claimObject is the answer of claim c; the first claim that finds every
// candidate of a generation leased is logged.
func (s *server) claimObject(r *http.Request, id string, c session.Claim) claimJSON {
	out := claimJSON{Generation: c.Generation, X: nums(c.X), Z: nums(c.Z), C: c.C, ExpiresAt: c.Expires.UTC()}
	if c.Index >= 0 {
		out.Index = &c.Index
	} else if s.waits.first(id, c.Generation) {
		s.log.InfoContext(r.Context(), "claims wait: every candidate without a value is leased",
			"request_id", requestID(r.Context()), "session_id", id, "generation", c.Generation, "first_lease_ends", c.Expires.UTC())
	}
	return out
}

// candidateParams reads ?generation= and ?index=.
func candidateParams(gs, is string) (g, i int, err error) {
	if g, err = intParam(gs, "generation", 0, 0, math.MaxInt32); err == nil {
		i, err = intParam(is, "index", 0, 0, math.MaxInt32)
	}
	return g, i, err
}

// release ends a worker's lease of a candidate (?generation=, ?index=,
// ?worker=): {"generation", "index", "released"}, released false when the
// worker held no running lease of it (a release sent again).
func (s *server) releaseLease(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("generation") == "" || q.Get("index") == "" {
		s.writeError(w, r, invalid("generation and index are required (the candidate whose lease to release)"))
		return
	}
	g, i, err := candidateParams(q.Get("generation"), q.Get("index"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	worker := q.Get("worker")
	if worker == "" {
		worker = idempotencyKey(r.Header.Get("Idempotency-Key")) // the key its claim was made with
	}
	ok, err := s.m.Release(r.Context(), chi.URLParam(r, "id"), g, i, worker)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, releaseJSON{Generation: g, Index: i, Released: ok})
}

// releaseJSON answers a release.
type releaseJSON struct {
	Generation int  `json:"generation"`
	Index      int  `json:"index"`
	Released   bool `json:"released"`
}

// waitLog remembers, per session, the last generation whose wait for a
// free candidate was logged: a wait is logged once, not at every poll.
type waitLog struct {
	mu   sync.Mutex
	last map[string]int
}

// first reports whether the wait of generation g of session id is new.
func (l *waitLog) first(id string, g int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil || len(l.last) > 10000 {
		l.last = make(map[string]int)
	}
	if prev, ok := l.last[id]; ok && prev == g {
		return false
	}
	l.last[id] = g
	return true
}

func (s *server) delete(w http.ResponseWriter, r *http.Request) {
	if err := s.m.Delete(r.Context(), chi.URLParam(r, "id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) ask(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if err := emptyOrJSON(r); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	b, err := s.m.Ask(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeBody(w, http.StatusOK, EncodeBatch(b), newline)
}

// emptyOrJSON checks the body of a request that takes none (POST ask and
// stop): empty, or one JSON value (a client's {} or null), nothing else.
func emptyOrJSON(r *http.Request) error {
	body, err := readBody(r.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if !json.Valid(body) {
		return invalid("the body must be empty or JSON (this request takes no parameters); got %d bytes that are not JSON", len(body))
	}
	return nil
}

var newline = []byte{'\n'}

// EncodeBatch is the batch as ask and tell?next=true answer it (without
// the newline).
//
// A large batch is encoded in parts on all the processors, each in its
// own region of one buffer, the regions then moved together: at n = 100,
// λ = 100 one goroutine takes about 0.9 ms, as long as the commit it hides
// behind here, longer than a commit on a faster disk.
func EncodeBatch(b session.Batch) []byte {
	parts := min(runtime.GOMAXPROCS(0), len(b.Candidates))
	if parts < 2 || b.Z != nil || len(b.Candidates)*len(b.Candidates[0]) < encodeInParts {
		return appendBatch(nil, b)
	}
	head := appendBatch(nil, session.Batch{Generation: b.Generation})
	head = head[:len(head)-len("]}")] // {"generation":g,"candidates":[
	rows := make([][][]float64, parts)
	start := make([]int, parts+1)
	start[0] = len(head)
	for p := range parts {
		rows[p] = b.Candidates[p*len(b.Candidates)/parts : (p+1)*len(b.Candidates)/parts]
		start[p+1] = start[p]
		for _, x := range rows[p] {
			start[p+1] += 3 + maxNumLen*len(x) // [x,...,x],
		}
	}
	buf := make([]byte, start[parts]+1)
	copy(buf, head)
	enc := make([][]byte, parts)
	part := func(p int) {
		e := buf[start[p]:start[p]:start[p+1]] // appends beyond it would move, not overwrite
		for _, x := range rows[p] {
			e = append(appendNums(e, x), ',')
		}
		enc[p] = e
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { part(p) })
	}
	part(0)
	wg.Wait()
	n := len(head)
	for _, e := range enc {
		n += copy(buf[n:], e) // down to the end of the previous part
	}
	buf[n-1] = ']' // the last row's comma
	return append(buf[:n], '}')
}

// encodeInParts is the size of a batch (λ·n) from which EncodeBatch splits
// the work; maxNumLen bounds the length of a number appendNum writes, with
// its comma ("-0.0000012345678901234567,").
const (
	encodeInParts = 4096
	maxNumLen     = 26
)

// appendBatch appends {"generation": g, "candidates": [...]}. The batch is
// most of the bytes the service writes: encoded directly, without
// encoding/json's second pass over a Marshaler's output.
func appendBatch(body []byte, b session.Batch) []byte {
	size := 64
	for _, x := range b.Candidates {
		size += 3 + 24*len(x)
	}
	body = slices.Grow(body, size)
	body = append(body, `{"generation":`...)
	body = strconv.AppendInt(body, int64(b.Generation), 10)
	body = append(body, `,"candidates":`...)
	body = appendMatrix(body, b.Candidates)
	body = appendBatchZC(body, b)
	return append(body, '}')
}

// tell answers with the advanced session; with ?next=true also with its
// pending batch, as "next" (null once the session has stopped), which
// saves the client the round trip of the next ask; with ?claim=true a
// worker's next claim (tellclaim.go).
func (s *server) tell(w http.ResponseWriter, r *http.Request) {
	tc, err := tellClaimParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	next := false
	if v := r.URL.Query().Get("next"); v != "" {
		var err error
		if next, err = strconv.ParseBool(v); err != nil {
			s.writeError(w, r, invalid("next %q, want true or false", v))
			return
		}
	}
	if !jsonBody(r) {
		s.writeError(w, r, errMediaType)
		return
	}
	p, err := decodeTell(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id := chi.URLParam(r, "id")
	if !next {
		sess, err := s.m.Tell(r.Context(), id, p)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if tc != nil {
			s.writeTellClaim(w, r, id, sess, tc)
			return
		}
		s.writeSession(w, r, http.StatusOK, sess)
		return
	}
	sess, batch, err := s.m.TellAsk(r.Context(), id, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := sessionObject(sess)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The session object, its closing brace replaced by "next".
	body = append(body[:len(body)-1], `,"next":`...)
	if batch == nil {
		s.writeBody(w, http.StatusOK, append(body, "null}\n"...))
		return
	}
	s.writeBody(w, http.StatusOK, body, EncodeBatch(*batch), []byte("}\n"))
}

// defaultHistoryPage is how many records the history reads from the store
// at a time: the answer is streamed page by page, so that a full history of
// a long session takes no more memory than one page.
const defaultHistoryPage = 500

// historyPager reads the records of a history answer a page at a time.
type historyPager struct {
	m           *session.Manager
	id          string
	from, limit int // limit 0: all
	page        int // records read at a time
	left        int
	done        bool
}

func newHistoryPager(m *session.Manager, id string, from, limit, page int) *historyPager {
	return &historyPager{m: m, id: id, from: from, limit: limit, page: page, left: limit}
}

// next returns the next page; done is true once it was the last.
func (p *historyPager) next(ctx context.Context) ([]session.HistoryRecord, error) {
	n := p.page
	if p.limit > 0 {
		n = min(n, p.left)
	}
	recs, err := p.m.History(ctx, p.id, p.from, n)
	if err != nil {
		return nil, err
	}
	if len(recs) > 0 {
		p.from = recs[len(recs)-1].Generation + 1
	}
	p.left -= len(recs)
	p.done = len(recs) < n || p.limit > 0 && p.left == 0
	return recs, nil
}

// history streams the records of the generations from ?from=, at most
// ?limit= of them (default all), as JSON or CSV. It reads them a page at a
// time: the first page decides the status; a failure after it (the
// session deleted meanwhile) cuts the answer, which the client sees as a
// broken body rather than a short one. The CSV's columns depend on the
// records (their per-coordinate values), so it reads them twice: once for
// the header, once for the lines.
func (s *server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err := intParam(q.Get("from"), "from", 0, 0, 1<<62)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	limit, err := intParam(q.Get("limit"), "limit", 0, 1, 1<<62)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "csv" {
		s.writeError(w, r, &session.Error{Code: session.CodeOutOfRange, Message: "format " + strconv.Quote(format) + ", want json or csv"})
		return
	}
	id := chi.URLParam(r, "id")
	out := &historyWriter{w: w, csv: format == "csv"}
	if out.csv {
		width := newHistoryPager(s.m, id, from, limit, s.historyPage)
		for !width.done {
			recs, err := width.next(r.Context())
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			for _, h := range recs {
				out.n = max(out.n, len(h.Mean))
				out.constrained = out.constrained || h.Constraint != nil
			}
		}
	}
	pages := newHistoryPager(s.m, id, from, limit, s.historyPage)
	recs, err := pages.next(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out.start()
	for {
		out.write(recs)
		if pages.done {
			break
		}
		if recs, err = pages.next(r.Context()); err != nil {
			s.log.WarnContext(r.Context(), "history cut", "request_id", requestID(r.Context()), "session_id", id, "error", err)
			panic(http.ErrAbortHandler)
		}
	}
	out.end()
}

// historyWriter writes the records of a history answer as they come.
type historyWriter struct {
	w   http.ResponseWriter
	csv bool
	n   int // CSV: the per-coordinate columns of each kind
	// CSV: whether the records are a constrained session's (its columns
	// follow the fixed ones)
	constrained bool
	cw          *csv.Writer
	row         []string
	buf         []byte
	first       bool
}

func (h *historyWriter) start() {
	if h.csv {
		h.w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		h.w.WriteHeader(http.StatusOK)
		h.cw = csv.NewWriter(h.w)
		h.cw.Write(csvHeaderOf(h.n, h.constrained))
		return
	}
	h.w.Header().Set("Content-Type", "application/json")
	h.w.WriteHeader(http.StatusOK)
	h.w.Write([]byte(`{"records":[`))
	h.first = true
}

func (h *historyWriter) write(recs []session.HistoryRecord) {
	if h.csv {
		for _, rec := range recs {
			h.row = csvRow(h.row[:0], rec, h.n, h.constrained)
			h.cw.Write(h.row)
		}
		h.cw.Flush()
		return
	}
	h.buf = h.buf[:0]
	for _, rec := range recs {
		if !h.first {
			h.buf = append(h.buf, ',')
		}
		h.first = false
		b, err := json.Marshal(toHistoryJSON(rec))
		if err != nil { // numbers are nums, never NaN
			panic(err)
		}
		h.buf = append(h.buf, b...)
	}
	h.w.Write(h.buf)
}

func (h *historyWriter) end() {
	if !h.csv {
		h.w.Write([]byte("]}\n"))
	}
}

var csvHeader = []string{"generation", "run", "lambda", "evaluations", "best", "median", "best_so_far",
	"sigma", "c1", "cmu", "cc", "axis_ratio", "restarted", "aux_mean_c1", "aux_mean_cmu", "aux_mean_cc",
	"aux_sigma", "aux_feasible", "overall_step", "injected"}

// csvConstraintsHeader are the columns of a constrained session's records
// (the history JSON's feasible, violation, best_feasible and
// best_feasible_so_far).
var csvConstraintsHeader = []string{"feasible", "violation", "best_feasible", "best_feasible_so_far"}

// csvHeaderOf is the CSV's header line: a constrained session's columns
// follow the fixed ones; when the records keep per-coordinate values (n of
// each), n columns of each follow: axis_length_0 … axis_length_{n−1},
// std_0 …, mean_0 ….
func csvHeaderOf(n int, constrained bool) []string {
	header := slices.Clip(csvHeader)
	if constrained {
		header = append(header, csvConstraintsHeader...)
	}
	if n > 0 {
		for _, name := range [...]string{"axis_length_", "std_", "mean_"} {
			for i := range n {
				header = append(header, name+strconv.Itoa(i))
			}
		}
	}
	return header
}

// csvRow appends the CSV fields of h to row: empty for values that are
// not finite or absent.
func csvRow(row []string, h session.HistoryRecord, n int, constrained bool) []string {
	f := func(v float64) string { return string(appendNum(nil, v)) }
	row = append(row, strconv.Itoa(h.Generation), strconv.Itoa(h.Run), strconv.Itoa(h.Lambda),
		strconv.Itoa(h.Evaluations), f(h.Best), f(h.Median), f(h.BestSoFar), f(h.Sigma),
		f(h.C1), f(h.CMu), f(h.Cc), f(h.AxisRatio), strconv.FormatBool(h.Restarted))
	if a := h.Aux; a != nil {
		row = append(row, f(a.Mean[0]), f(a.Mean[1]), f(a.Mean[2]), f(a.Sigma), strconv.FormatBool(a.Feasible))
	} else {
		row = append(row, "", "", "", "", "")
	}
	row = append(row, f(h.OverallStep), strconv.Itoa(h.Injected))
	if c := h.Constraint; c != nil {
		row = append(row, strconv.Itoa(c.Feasible), f(c.Violation), f(c.BestFeasible), f(c.BestFeasibleSoFar))
	} else if constrained {
		row = append(row, "", "", "", "")
	}
	if n > 0 {
		for _, v := range [...][]float64{h.AxisLengths, h.Stds, h.Mean} {
			for i := range n {
				if i < len(v) {
					row = append(row, f(v[i]))
				} else {
					row = append(row, "")
				}
			}
		}
	}
	for i, v := range row {
		if v == "null" {
			row[i] = ""
		}
	}
	return row
}

// Backups: at most maxBackups at once; each must go at backupMinRate
// bytes a second or faster (with backupGrace more), since the read
// transaction it holds makes a commit that grows the file wait.
const (
	maxBackups    = 2
	backupMinRate = 1 << 20
	backupGrace   = time.Minute
)

// backupDB streams a consistent copy of the database (see store.Snapshot),
// at most maxBackups at once: beyond, 429 with Retry-After.
func (s *server) backupDB(w http.ResponseWriter, r *http.Request) {
	if s.backup == nil {
		s.writeError(w, r, &session.Error{Code: session.CodeNotFound, Message: "this server makes no backups"})
		return
	}
	select {
	case s.backups <- struct{}{}:
		defer func() { <-s.backups }()
	default:
		w.Header().Set("Retry-After", "10")
		s.writeError(w, r, &apiError{code: codeTooManyRequests, msg: fmt.Sprintf("%d backups are under way; try again later", maxBackups)})
		return
	}
	f, n, err := s.backup()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="selfcma-backup.db"`)
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	// The server's WriteTimeout is for the JSON answers: a backup gets
	// the time it needs at backupMinRate, and no more.
	took := backupGrace + time.Duration(n/backupMinRate)*time.Second
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(took))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, f); err != nil {
		s.log.WarnContext(r.Context(), "backup not sent whole", "request_id", requestID(r.Context()), "error", err)
	}
}
