package ui

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// CookieName is the cookie the login form sets.
const CookieName = "selfcma_ui"

// cookieMaxAge is how long a login lasts.
const cookieMaxAge = 30 * 24 * time.Hour

// maxLoginBytes limits the login form's body.
const maxLoginBytes = 4 << 10

// auth checks the token. The cookie holds HMAC-SHA256(token, cookieLabel):
// it proves the token was typed without holding it, and every cookie dies
// with a change of the token. Comparisons are of SHA-256 hashes in constant
// time, so that neither content nor length leaks.
type auth struct {
	on         bool
	tokenHash  [32]byte // SHA-256 of the token
	cookieHash [32]byte // SHA-256 of the cookie's value
	cookie     string   // the cookie's value
}

const cookieLabel = "selfcma ui login v1"

func newAuth(token string) auth {
	if token == "" {
		return auth{}
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(cookieLabel))
	c := hex.EncodeToString(m.Sum(nil))
	return auth{on: true, tokenHash: sha256.Sum256([]byte(token)), cookie: c, cookieHash: sha256.Sum256([]byte(c))}
}

func (a *auth) tokenOK(token string) bool {
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], a.tokenHash[:]) == 1
}

// ok reports whether r carries the token as a bearer token or the login
// cookie.
func (a *auth) ok(r *http.Request) bool {
	if !a.on {
		return true
	}
	if scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		return a.tokenOK(token)
	}
	return a.loggedIn(r)
}

// LoggedIn returns a check that a request carries the login cookie of the
// pages for token: the API admits such a GET, so that the page's links to
// the history (JSON, CSV) and the session JSON open in the browser. It
// reports false for every request when token is empty.
func LoggedIn(token string) func(*http.Request) bool {
	a := newAuth(token)
	return a.loggedIn
}

// loggedIn reports whether r carries the login cookie.
func (a *auth) loggedIn(r *http.Request) bool {
	if !a.on {
		return false
	}
	c, err := r.Cookie(CookieName)
	if err != nil {
		return false
	}
	h := sha256.Sum256([]byte(c.Value))
	return subtle.ConstantTimeCompare(h[:], a.cookieHash[:]) == 1
}

// requireAuth sends a request without the token to the login form, or
// answers 401: to a wrong bearer token and to the live updates' JSON.
func (h *handler) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.auth.ok(r) {
			next.ServeHTTP(w, r)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/plots"):
			w.Header().Set("WWW-Authenticate", `Bearer realm="selfcma"`)
			writeJSON(w, http.StatusUnauthorized, plotsJSON{Error: "unauthorized"})
			return
		case r.Header.Get("Authorization") != "":
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
	if !h.auth.tokenOK(r.PostForm.Get("token")) {
		p := h.newPage(r, "Log in")
		h.render(w, r, http.StatusUnauthorized, loginTmpl, p, loginData{page: p, Next: next, Failed: true})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: h.auth.cookie, Path: "/", // the page's data links are /v1 GETs
		MaxAge: int(cookieMaxAge / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil,
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}
