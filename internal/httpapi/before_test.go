package httpapi

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// oldSession is a session as the server before active CMA-ES, BIPOP,
// incpopsize and restart points stored it (testdata/sessions-before-bipop.txt:
// its record, and its GET as that server answered it).
type oldSession struct {
	rec  session.Record
	view []byte
}

func readOldSessions(tb testing.TB) []oldSession {
	tb.Helper()
	b, err := os.ReadFile("testdata/sessions-before-bipop.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var out []oldSession
	var s oldSession
	for line := range strings.Lines(string(b)) {
		key, val, _ := strings.Cut(line, " ")
		var err error
		switch key {
		case "id":
			s = oldSession{rec: session.Record{ID: strings.TrimSpace(val)}}
		case "meta":
			s.rec.Meta, err = hex.DecodeString(strings.TrimSpace(val))
		case "state":
			s.rec.State, err = hex.DecodeString(strings.TrimSpace(val))
		case "view":
			s.view = []byte(val)
			out = append(out, s)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no sessions in testdata/sessions-before-bipop.txt")
	}
	return out
}

// A session created before active CMA-ES, BIPOP, incpopsize and restart
// points is answered as before, with the new fields saying what it runs:
// active false, mirrored false, mean_rate false, point x0,
// spare_best_small false, incpopsize 2 (λ doubled) with ipop, and the
// regimes: the first run default, every IPOP restart large;
// a self-CMA-ES snr false; and it goes on.
func TestSessionsFromBeforeBIPOP(t *testing.T) {
	meanInBounds := regexp.MustCompile(`,"mean_in_bounds":\[[^\]]*\]`)
	var st session.Store
	ts := newTestServer(t, serverOpts{wrapStore: func(s session.Store) session.Store { st = s; return s }})
	for _, old := range readOldSessions(t) {
		if _, err := st.Put(context.Background(), old.rec, nil); err != nil {
			t.Fatal(err)
		}
		path := "/v1/sessions/" + old.rec.ID
		got := ts.do(t, call{method: "GET", path: path})
		if got.status != 200 {
			t.Fatalf("GET: %d %s", got.status, got.body)
		}
		// What the view adds, each the first of its kind in the body.
		added := []string{`,"active":false`, `,"mirrored":false`, `,"mean_rate":false`, `,"point":"x0"`, `,"spare_best_small":false`, `,"regime":"default"`}
		switch {
		case bytes.Contains(old.view, []byte(`"count":1,`)): // one IPOP restart: the current run large, the first default
			added = []string{`,"active":false`, `,"mirrored":false`, `,"mean_rate":false`, `,"incpopsize":2`, `,"point":"x0"`, `,"spare_best_small":false`, `,"regime":"large"`, `,"regime":"default"`}
		case bytes.Contains(old.view, []byte(`"strategy":"ipop"`)):
			added = append(added, `,"incpopsize":2`)
		}
		if bytes.Contains(old.view, []byte(`"algorithm":"self-cma-es"`)) {
			added = append(added, `,"snr":false`) // before the signal-to-noise rule
		}
		// With bounds, mean_in_bounds (added later) follows the mean.
		body := meanInBounds.ReplaceAll(got.body, nil)
		for _, a := range added {
			if !bytes.Contains(body, []byte(a)) {
				t.Fatalf("%s: the view has no %s: %s", old.rec.ID, a, body)
			}
			body = bytes.Replace(body, []byte(a), nil, 1)
		}
		if !bytes.Equal(body, old.view) {
			t.Errorf("%s: the view changed beyond the new fields:\n got %s\nwant %s", old.rec.ID, got.body, old.view)
		}
		ts.tell(t, old.rec.ID, sphereTell(ts.ask(t, old.rec.ID)))
	}
}
