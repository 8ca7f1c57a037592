package ui

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/internal/httpapi/throttle"
)

// Prefix is the path the handler must be mounted at; the pages link to
// each other under it.
const Prefix = "/ui"

// DefaultPollInterval is how often a running session's page polls.
const DefaultPollInterval = 3 * time.Second

// Options configure the pages.
type Options struct {
	// Token, when not empty, is required for every page, as a bearer token
	// ("Authorization: Bearer <Token>") or through the cookie that the login
	// form at /ui/login sets.
	Token string
	// Logins are the logins of the pages, to share with the API's
	// ReadAccess; nil = NewLogins(Token). Their token must be Token.
	Logins *Logins
	// Throttle counts wrong tokens by address, shared with the API; nil =
	// one of the pages' own.
	Throttle *throttle.Throttle
	// Logger receives the errors behind 500 pages; nil = slog.Default().
	Logger *slog.Logger
	// PollInterval is how often a running session's page asks for news;
	// 0 = DefaultPollInterval.
	PollInterval time.Duration
	// Columns is the number of columns the plots are downsampled to;
	// 0 = DefaultColumns.
	Columns int
	// BackupAvailable shows the list's link to /v1/backup (without a
	// token): true when the server's store makes backups (bbolt), false
	// when /v1/backup answers 501 (PostgreSQL).
	BackupAvailable bool
}

//go:embed templates/*.html
var templateFS embed.FS

var funcs = template.FuncMap{
	"f":    fmtFloat,
	"time": fmtTime,
	"vec":  newVector,
}

func parse(page string) *template.Template {
	return template.Must(template.New(page).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html"))
}

var (
	listTmpl    = parse("list")
	sessionTmpl = parse("session")
	errorTmpl   = parse("error")
	loginTmpl   = parse("login")
)

type handler struct {
	src     Source
	log     *slog.Logger
	auth    auth
	pollMS  int
	columns int
	backup  bool // the store makes backups
}

// Handler returns the pages, to be mounted at Prefix on a chi router:
//
//	r.Mount(ui.Prefix, ui.Handler(src, ui.Options{Token: token}))
//
// Routes, under Prefix: GET / (the sessions), GET /sessions/{id} (a
// session), GET /sessions/{id}/plots (the live part of a session's page as
// JSON: {"status", "generation", "html"} or {"unchanged": true} when the
// query's generation is still the current one), GET and POST /login, and
// POST /logout.
func Handler(src Source, opt Options) http.Handler {
	h := &handler{src: src, log: opt.Logger, auth: auth{Logins: opt.Logins, throttle: opt.Throttle}, columns: opt.Columns,
		backup: opt.BackupAvailable}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.auth.Logins == nil {
		h.auth.Logins = NewLogins(opt.Token)
	}
	if h.auth.throttle == nil {
		h.auth.throttle = throttle.New()
	}
	poll := opt.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	h.pollMS = int(poll / time.Millisecond)

	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.errorPage(w, r, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+".")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		h.errorPage(w, r, http.StatusMethodNotAllowed, "Method not allowed", r.Method+" is not allowed here.")
	})
	r.Get("/login", h.loginForm)
	r.Post("/login", h.login)
	r.Post("/logout", h.logout)
	r.Group(func(r chi.Router) {
		r.Use(h.requireAuth)
		r.Get("/", h.list)
		r.Get("/sessions/{id}", h.session)
		r.Get("/sessions/{id}/plots", h.plots)
	})
	return r
}

// page is what every page's layout reads.
type page struct {
	Title  string
	Nonce  string // of the inline script, for the Content-Security-Policy
	Logout bool   // logged in with the cookie: show "log out"
	Wide   bool   // the page's plots take the width of a wide screen
}

func (h *handler) newPage(r *http.Request, title string) page {
	var b [16]byte
	rand.Read(b[:])
	return page{Title: title, Nonce: base64.RawURLEncoding.EncodeToString(b[:]), Logout: h.auth.LoggedIn(r)}
}

// render executes t into a buffer, then writes it with status.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, t *template.Template, p page, data any) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		h.internalError(w, r, "render "+t.Name(), err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+p.Nonce+"'; style-src 'unsafe-inline'; "+
		"img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

type errorData struct {
	page
	Heading, Message string
}

func (h *handler) errorPage(w http.ResponseWriter, r *http.Request, status int, heading, msg string) {
	p := h.newPage(r, heading)
	h.render(w, r, status, errorTmpl, p, errorData{page: p, Heading: heading, Message: msg})
}

// internalError logs err and answers a 500 page that shows none of it.
func (h *handler) internalError(w http.ResponseWriter, r *http.Request, step string, err error) {
	h.log.ErrorContext(r.Context(), "ui: internal error", "step", step, "path", r.URL.Path, "error", err)
	var buf bytes.Buffer
	p := h.newPage(r, "Internal error")
	if errorTmpl.ExecuteTemplate(&buf, "layout", errorData{page: p, Heading: "Internal error",
		Message: "Something went wrong on the server. It has been logged."}) != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(buf.Bytes())
}

// The list of sessions.

type listData struct {
	page
	Sessions []Summary
	Next     string // the link to the next page; "" on the last
	// Name and Status are the filter's: the sessions listed are those
	// whose name contains Name, of status Status ("" = any).
	Name, Status string
	// Backup shows the link to /v1/backup: only if the store makes
	// backups, and without a token, since the login does not read the
	// backup (the whole database takes the bearer token).
	Backup bool
}

// Pages of the list, as GET /v1/sessions has them.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
	maxNameFilter    = 200 // characters of the name filter
)

// listQuery reads the query of the list: limit, before, name and status.
// Its error names the parameter that is wrong.
func listQuery(q url.Values) (ListQuery, error) {
	lq := ListQuery{Limit: defaultListLimit, Before: q.Get("before"), Name: strings.TrimSpace(q.Get("name")), Status: q.Get("status")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			return lq, fmt.Errorf("limit %q: want an integer from 1 to %d", v, maxListLimit)
		}
		lq.Limit = n
	}
	if n := len([]rune(lq.Name)); n > maxNameFilter {
		return lq, fmt.Errorf("name: %d characters, want at most %d", n, maxNameFilter)
	}
	switch lq.Status {
	case "", StatusRunning, StatusStopped:
	default:
		return lq, fmt.Errorf("status %q: want %s, %s or nothing (any)", lq.Status, StatusRunning, StatusStopped)
	}
	return lq, nil
}

// nextPage is the link to the page after the one that ends with the
// session of id last.
func nextPage(lq ListQuery, last string) string {
	next := url.Values{"before": {last}}
	if lq.Limit != defaultListLimit {
		next.Set("limit", strconv.Itoa(lq.Limit))
	}
	if lq.Name != "" {
		next.Set("name", lq.Name)
	}
	if lq.Status != "" {
		next.Set("status", lq.Status)
	}
	return Prefix + "/?" + next.Encode()
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == Prefix {
		// /ui → /ui/, so that relative references resolve alike.
		http.Redirect(w, r, Prefix+"/", http.StatusMovedPermanently)
		return
	}
	lq, err := listQuery(r.URL.Query())
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, "Bad request", err.Error()+".")
		return
	}
	limit := lq.Limit
	lq.Limit++ // one more, to know whether there is a next page
	ss, err := h.src.ListSessions(r.Context(), lq)
	lq.Limit = limit
	if err != nil {
		h.internalError(w, r, "list sessions", err)
		return
	}
	d := listData{Sessions: ss, Name: lq.Name, Status: lq.Status, Backup: h.backup && !h.auth.on}
	if len(ss) > limit {
		d.Sessions = ss[:limit]
		d.Next = nextPage(lq, ss[limit-1].ID)
	}
	d.page = h.newPage(r, "Sessions")
	h.render(w, r, http.StatusOK, listTmpl, d.page, d)
}

// A session's page.

// sessionData is a session's page; Live is the part that polling replaces.
type sessionData struct {
	page
	Live liveData
}

type liveData struct {
	Detail
	Running     bool
	Plots       plotSet
	Points      int // generations in the history
	PollURL     string
	PollMS      int
	PollSeconds string
	APIURL      string
	HistoryURL  string
	CSVURL      string
	Unnamed     bool
	DefaultRate bool // the rates are the defaults (plain CMA-ES)
}

func (h *handler) load(r *http.Request) (liveData, error) {
	id := chi.URLParam(r, "id")
	d, err := h.src.Session(r.Context(), id)
	if err != nil {
		return liveData{}, err
	}
	pts, err := h.src.History(r.Context(), id)
	if err != nil {
		return liveData{}, err
	}
	return h.liveOf(d, pts), nil
}

func (h *handler) liveOf(d Detail, pts []Point) liveData {
	esc := url.PathEscape(d.ID)
	api := "/v1/sessions/" + esc
	return liveData{
		Detail:      d,
		Running:     d.Status == StatusRunning,
		Plots:       buildPlots(d, pts, h.columns),
		Points:      len(pts),
		PollURL:     Prefix + "/sessions/" + esc + "/plots",
		PollMS:      h.pollMS,
		PollSeconds: strconv.FormatFloat(float64(h.pollMS)/1000, 'g', 3, 64),
		APIURL:      api,
		HistoryURL:  api + "/history",
		CSVURL:      api + "/history?format=csv",
		Unnamed:     d.Name == "",
		DefaultRate: d.Hyper == d.Defaults,
	}
}

func (h *handler) session(w http.ResponseWriter, r *http.Request) {
	live, err := h.load(r)
	if errors.Is(err, ErrNotFound) {
		h.errorPage(w, r, http.StatusNotFound, "Session not found", "There is no session with id "+chi.URLParam(r, "id")+".")
		return
	}
	if err != nil {
		h.internalError(w, r, "load session", err)
		return
	}
	title := live.Name
	if title == "" {
		title = live.ID
	}
	p := h.newPage(r, title)
	p.Wide = true
	h.render(w, r, http.StatusOK, sessionTmpl, p, sessionData{page: p, Live: live})
}

// plotsJSON is the answer of GET /ui/sessions/{id}/plots.
type plotsJSON struct {
	Status     string `json:"status"`
	Generation int    `json:"generation"`
	Unchanged  bool   `json:"unchanged,omitempty"`
	HTML       string `json:"html,omitempty"`
	Error      string `json:"error,omitempty"`
}

func (h *handler) plots(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	d, err := h.src.Session(r.Context(), id)
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, plotsJSON{Error: "no such session"})
		return
	case err != nil:
		h.log.ErrorContext(r.Context(), "ui: internal error", "step", "load session", "path", r.URL.Path, "error", err)
		writeJSON(w, http.StatusInternalServerError, plotsJSON{Error: "internal error"})
		return
	}
	out := plotsJSON{Status: d.Status, Generation: d.Generation}
	if g, err := strconv.Atoi(r.URL.Query().Get("generation")); err == nil && g == d.Generation && d.Status == StatusRunning {
		out.Unchanged = true
		writeJSON(w, http.StatusOK, out)
		return
	}
	pts, err := h.src.History(r.Context(), id)
	if err != nil {
		status, msg := http.StatusInternalServerError, "internal error"
		if errors.Is(err, ErrNotFound) {
			status, msg = http.StatusNotFound, "no such session"
		} else {
			h.log.ErrorContext(r.Context(), "ui: internal error", "step", "load history", "path", r.URL.Path, "error", err)
		}
		writeJSON(w, status, plotsJSON{Error: msg})
		return
	}
	var buf bytes.Buffer
	if err := sessionTmpl.ExecuteTemplate(&buf, "live", h.liveOf(d, pts)); err != nil {
		h.log.ErrorContext(r.Context(), "ui: internal error", "step", "render live", "path", r.URL.Path, "error", err)
		writeJSON(w, http.StatusInternalServerError, plotsJSON{Error: "internal error"})
		return
	}
	out.HTML = buf.String()
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, status = []byte(`{"error":"internal error"}`), http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// Formatting for the templates.

// fmtFloat formats a value with 6 significant digits; NaN as "—".
func fmtFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	}
	return strings.Replace(strconv.FormatFloat(v, 'g', 6, 64), "-", "−", 1)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// vectorHead is how many coordinates a vector shows before "show all".
const vectorHead = 8

// vectorAllMax is the longest vector a page shows in full ("show all"): a
// sep-cma-es session may have 10^5 coordinates, which the API serves.
const vectorAllMax = 10000

// vector is a vector on a page: its first coordinates, and all of them
// when there are more, up to vectorAllMax.
type vector struct {
	ID   string // of the element, and of its <details> with "-all"
	Len  int
	Head []string
	All  []string // nil when Head is all, or when there are more than vectorAllMax
	Long bool     // more than vectorAllMax: the page shows the head only
}

func newVector(id string, v []float64) vector {
	if len(v) > vectorAllMax {
		head := make([]string, vectorHead)
		for i := range head {
			head[i] = fmtFloat(v[i])
		}
		return vector{ID: id, Len: len(v), Head: head, Long: true}
	}
	all := make([]string, len(v))
	for i, x := range v {
		all[i] = fmtFloat(x)
	}
	if len(all) <= vectorHead {
		return vector{ID: id, Len: len(v), Head: all}
	}
	return vector{ID: id, Len: len(v), Head: all[:vectorHead], All: all}
}
