package ui

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A login runs out after LoginTTL, and the table holds at most maxLogins,
// dropping the one nearest its end.
func TestLoginsExpireAndAreBounded(t *testing.T) {
	now := time.Unix(1e9, 0)
	l := NewLogins("tok")
	l.now = func() time.Time { return now }
	req := func(v string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: CookieName, Value: v})
		return r
	}
	first := l.login()
	now = now.Add(time.Second)
	second := l.login()
	if !l.LoggedIn(req(first)) || !l.LoggedIn(req(second)) {
		t.Fatal("fresh logins not logged in")
	}
	now = now.Add(LoginTTL - time.Second)
	if l.LoggedIn(req(first)) || !l.LoggedIn(req(second)) {
		t.Error("at the first's end: want it out, the second in")
	}
	for range maxLogins + 10 {
		l.login()
	}
	if n := len(l.m); n > maxLogins {
		t.Errorf("%d logins held, want at most %d", n, maxLogins)
	}
	if l.LoggedIn(req(second)) {
		t.Error("the login nearest its end survived a full table")
	}
}
