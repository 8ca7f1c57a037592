package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/selfcma/selfcma/internal/httpapi/throttle"
)

// CookieName is the cookie the login form sets.
const CookieName = "selfcma_ui"

// LoginTTL is how long a login lasts.
const LoginTTL = 7 * 24 * time.Hour

// maxLogins bounds the logins held; beyond, the one nearest its end goes.
const maxLogins = 10000

// maxLoginBytes limits the login form's body.
const maxLoginBytes = 4 << 10

// Logins are the logins of the pages: each a random value in the cookie,
// known to the server by its SHA-256 with an expiry, until it runs out or
// logs out. They live in this process's memory: a restart (or a change of
// the token) logs everyone out, and a login through one server is not
// known to another. (A cookie signed with an expiry would be known to
// every server with the key, but could not be revoked without a shared
// list of revoked cookies; logins are rare and cheap to repeat.)
type Logins struct {
	on        bool
	tokenHash [32]byte // SHA-256 of the token
	now       func() time.Time

	mu sync.Mutex
	m  map[[32]byte]time.Time // SHA-256 of a cookie's value -> its expiry
}

// NewLogins returns the logins of the pages for token; with token empty,
// nobody is ever logged in (the pages need no login).
func NewLogins(token string) *Logins {
	l := &Logins{now: time.Now, m: map[[32]byte]time.Time{}}
	if token != "" {
		l.on, l.tokenHash = true, sha256.Sum256([]byte(token))
	}
	return l
}

// tokenOK compares in constant time (of hashes, so that not even the
// length leaks).
func (l *Logins) tokenOK(token string) bool {
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], l.tokenHash[:]) == 1
}

// LoggedIn reports whether r carries the cookie of a login that has
// neither run out nor logged out. The API admits such a GET, so that the
// page's links to the history (JSON, CSV) and the session JSON open in the
// browser.
func (l *Logins) LoggedIn(r *http.Request) bool {
	if !l.on {
		return false
	}
	c, err := r.Cookie(CookieName)
	if err != nil {
		return false
	}
	h := sha256.Sum256([]byte(c.Value))
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.m[h]
	if ok && !l.now().Before(exp) {
		delete(l.m, h)
		return false
	}
	return ok
}

// login starts a login and returns its cookie's value.
func (l *Logins) login() string {
	var b [32]byte
	rand.Read(b[:])
	v := hex.EncodeToString(b[:])
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) >= maxLogins {
		var oldest [32]byte
		first := true
		for k, exp := range l.m {
			if !now.Before(exp) {
				delete(l.m, k)
			} else if first || exp.Before(l.m[oldest]) {
				oldest, first = k, false
			}
		}
		if len(l.m) >= maxLogins {
			delete(l.m, oldest)
		}
	}
	l.m[sha256.Sum256([]byte(v))] = now.Add(LoginTTL)
	return v
}

// logout ends the login of r's cookie, if any.
func (l *Logins) logout(r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		h := sha256.Sum256([]byte(c.Value))
		l.mu.Lock()
		delete(l.m, h)
		l.mu.Unlock()
	}
}

// auth checks the token, as a bearer token or through a login, and
// throttles the addresses that guess.
type auth struct {
	*Logins
	throttle *throttle.Throttle
}

// ok reports whether r carries the token as a bearer token or the cookie
// of a login.
func (a *auth) ok(r *http.Request) bool {
	if !a.on {
		return true
	}
	if scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		return a.tokenOK(token)
	}
	return a.LoggedIn(r)
}

// blocked answers 429 if r's address has guessed too often.
func (h *handler) blocked(w http.ResponseWriter, r *http.Request) bool {
	blocked, wait := h.auth.throttle.Blocked(throttle.Key(r))
	if blocked {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		h.errorPage(w, r, http.StatusTooManyRequests, "Too many attempts", "Too many wrong tokens from this address: try again in a minute.")
	}
	return blocked
}

// failed counts and logs a wrong token from r's address.
func (h *handler) failed(r *http.Request, what string) {
	key := throttle.Key(r)
	_, first := h.auth.throttle.Fail(key)
	h.log.WarnContext(r.Context(), what, "client", r.RemoteAddr, "path", r.URL.Path)
	if first {
		h.log.WarnContext(r.Context(), "client throttled", "client", key.String(), "failures", h.auth.throttle.Max, "window", h.auth.throttle.Window)
	}
}

// requireAuth sends a request without the token to the login form, or
// answers 401: to a wrong bearer token and to the live updates' JSON. An
// address that sent too many wrong tokens is 429, whatever it sends but a
// login's cookie (which no guess finds).
func (h *handler) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer := r.Header.Get("Authorization") != ""
		if !h.auth.on || !bearer && h.auth.LoggedIn(r) {
			next.ServeHTTP(w, r)
			return
		}
		if bearer && h.blocked(w, r) {
			return
		}
		if h.auth.ok(r) {
			next.ServeHTTP(w, r)
			return
		}
		if bearer {
			h.failed(r, "ui: wrong bearer token")
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/plots"):
			w.Header().Set("WWW-Authenticate", `Bearer realm="selfcma"`)
			writeJSON(w, http.StatusUnauthorized, plotsJSON{Error: "unauthorized"})
			return
		case bearer:
			// A client that sent a wrong token is told so, not redirected.
			w.Header().Set("WWW-Authenticate", `Bearer realm="selfcma"`)
			h.errorPage(w, r, http.StatusUnauthorized, "Unauthorized", "The bearer token is wrong.")
			return
		}
		http.Redirect(w, r, Prefix+"/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	})
}

// safeNext returns where to go after logging in: a path under Prefix, else
// the list.
func safeNext(next string) string {
	if (next == Prefix || strings.HasPrefix(next, Prefix+"/")) && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return Prefix + "/"
}

type loginData struct {
	page
	Next    string
	Failed  bool
	NoToken bool
}

func (h *handler) loginForm(w http.ResponseWriter, r *http.Request) {
	p := h.newPage(r, "Log in")
	h.render(w, r, http.StatusOK, loginTmpl, p, loginData{page: p, Next: safeNext(r.URL.Query().Get("next")), NoToken: !h.auth.on})
}

func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBytes)
	if err := r.ParseForm(); err != nil {
		h.errorPage(w, r, http.StatusBadRequest, "Bad request", "The login form could not be read.")
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	if !h.auth.on {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if h.blocked(w, r) {
		return
	}
	if !h.auth.tokenOK(r.PostForm.Get("token")) {
		h.failed(r, "ui: wrong token at login")
		p := h.newPage(r, "Log in")
		h.render(w, r, http.StatusUnauthorized, loginTmpl, p, loginData{page: p, Next: next, Failed: true})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: h.auth.login(), Path: "/", // the page's data links are /v1 GETs
		MaxAge: int(LoginTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil,
	})
	h.log.InfoContext(r.Context(), "ui: login", "client", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the login (the server forgets it: a copy of the cookie no
// longer works) and clears the cookie.
func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	h.auth.logout(r)
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}
