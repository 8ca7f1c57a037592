package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/ui"
	"github.com/selfcma/selfcma/internal/ui/sessionsource"
)

// chromiumPath finds Debian's Chromium (package chromium).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// needChromium returns Chromium's path; without it the test skips, or
// fails when the environment variable CI is set (CI installs it).
func needChromium(t *testing.T) string {
	t.Helper()
	bin := chromiumPath()
	if bin == "" {
		msg := "no Chromium found (Debian package chromium: apt-get install -y chromium); the browser test needs it"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("the browser test takes a few seconds")
	}
	return bin
}

// chromiumTimeout ends a Chromium that is stuck: a deadline for a busy
// machine (a page takes seconds), not a measure.
const chromiumTimeout = 5 * time.Minute

// chromium runs headless Chromium with args and returns its standard output.
func chromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := runChromium(bin, t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runChromium is chromium for any goroutine: it returns its error (a
// t.Fatal outside the test's goroutine would leave the test waiting for
// the page forever), with profile directory dir.
func runChromium(bin, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + dir}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), nil
}

// apiClient drives the real HTTP API.
type apiClient struct {
	t    *testing.T
	base string
}

func (c apiClient) do(method, path string, in, out any) {
	c.t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			c.t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		c.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
}

type apiSession struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Generation int    `json:"generation"`
	Restarts   struct {
		Count int `json:"count"`
	} `json:"restarts"`
	Links struct {
		UI string `json:"ui"`
	} `json:"links"`
}

// generation asks for the pending batch, evaluates the sphere and tells it.
func (c apiClient) generation(id string) apiSession {
	c.t.Helper()
	var b struct {
		Generation int         `json:"generation"`
		Candidates [][]float64 `json:"candidates"`
	}
	c.do(http.MethodGet, "/v1/sessions/"+id+"/ask", nil, &b)
	f := make([]float64, len(b.Candidates))
	for i, x := range b.Candidates {
		for _, v := range x {
			f[i] += v * v
		}
	}
	var s apiSession
	c.do(http.MethodPost, "/v1/sessions/"+id+"/tell", map[string]any{"generation": b.Generation, "fitness": f}, &s)
	return s
}

// TestBrowser runs a self-CMA-ES session with IPOP restarts on the 10-D
// sphere through the real HTTP API, with the pages mounted as the server
// mounts them, and looks at the pages in headless Chromium: the session's
// page is opened while the session runs, its script polls and swaps in the
// final state once the session has stopped; then a screenshot, and the list.
//
// SELFCMA_UI_SCREENSHOT=file.png keeps a copy of the screenshot.
func TestBrowser(t *testing.T) {
	bin := needChromium(t)

	st, err := bolt.Open(filepath.Join(t.TempDir(), "ui.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := session.NewManager(st, session.Options{})
	r := httpapi.New(httpapi.Config{Manager: m})
	r.Mount(ui.Prefix, ui.Handler(sessionsource.New(m), ui.Options{PollInterval: 2 * time.Second}))

	// The first poll of the live page waits until the session has stopped,
	// so that the page's script sees it stop, whatever the timing.
	var (
		polledOnce sync.Once
		polled     = make(chan struct{})
		finished   = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/plots") {
			polledOnce.Do(func() { close(polled) })
			select {
			case <-finished:
			case <-time.After(chromiumTimeout):
			}
		}
		r.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	api := apiClient{t: t, base: srv.URL}

	var s apiSession
	api.do(http.MethodPost, "/v1/sessions", map[string]any{
		"name": "sphere 10-D", "x0": []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, "sigma0": 2, "seed": 1,
		"restarts":    map[string]any{"strategy": "ipop", "max": 2},
		"termination": map[string]any{"tol_fun": 1e-6, "max_evaluations": 200_000},
	}, &s)
	if s.Links.UI != "/ui/sessions/"+s.ID {
		t.Errorf("links.ui %q, want /ui/sessions/%s", s.Links.UI, s.ID)
	}
	for range 10 {
		s = api.generation(s.ID)
	}
	if s.Status != "running" {
		t.Fatalf("stopped after %d generations", s.Generation)
	}

	// Open the page of the running session; finish the session once it polls.
	pageURL := srv.URL + s.Links.UI
	type page struct {
		dom string
		err error
	}
	dumped := make(chan page, 1)
	profile := t.TempDir()
	go func() {
		dom, err := runChromium(bin, profile, "--virtual-time-budget=30000", "--dump-dom", pageURL)
		dumped <- page{dom, err}
	}()
	select {
	case <-polled:
	case p := <-dumped:
		close(finished)
		t.Fatalf("the page did not poll: %v\n%s", p.err, p.dom)
	case <-time.After(chromiumTimeout):
		close(finished)
		t.Fatalf("the page did not poll within %v", chromiumTimeout)
	}
	for s.Status == "running" {
		s = api.generation(s.ID)
	}
	close(finished)
	p := <-dumped
	if p.err != nil {
		t.Fatal(p.err)
	}
	dom := p.dom
	if s.Restarts.Count != 2 {
		t.Errorf("%d restarts, want 2", s.Restarts.Count)
	}

	checkFinalPage(t, dom, s)

	// A screenshot of the final page.
	png := filepath.Join(t.TempDir(), "session.png")
	chromium(t, bin, "--screenshot="+png, "--window-size=1280,1800", "--hide-scrollbars", pageURL)
	img, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if len(img) < 10_000 || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot: %d bytes, want a PNG", len(img))
	}
	if keep := os.Getenv("SELFCMA_UI_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, img, 0o644); err != nil {
			t.Error(err)
		}
	}

	// The list links to the page.
	list := chromium(t, bin, "--dump-dom", srv.URL+"/ui/")
	if !strings.Contains(list, `href="/ui/sessions/`+s.ID+`"`) || !strings.Contains(list, "sphere 10-D") {
		t.Errorf("the list does not link to the session:\n%s", list)
	}
}

// checkFinalPage checks the page of session s after its script polled
// until s stopped: the final state swapped in, every plot with one point
// per generation, its legend and the two restarts.
func checkFinalPage(t *testing.T, dom string, s apiSession) {
	t.Helper()
	// The script swapped in the final state.
	for _, want := range []string{`id="live-state" data-state="stopped"`, `data-status="stopped"`, "Stopped because",
		fmt.Sprintf(`<td id="generation">%d</td>`, s.Generation)} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page after polling lacks %q", want)
		}
	}
	order, by := plots(t, dom)
	if strings.Join(order, ",") != strings.Join(plotOrder, ",") {
		t.Fatalf("plots %v, want %v", order, plotOrder)
	}
	for name, series := range wantSeries {
		p := by[name]
		for _, sr := range series {
			if p.points[sr] != s.Generation {
				t.Errorf("plot %s, series %s: %d points, want %d (one per generation)", name, sr, p.points[sr], s.Generation)
			}
		}
		for _, sr := range wantLegend[name] {
			if !contains(p.legend, sr) {
				t.Errorf("plot %s: legend %v lacks %s", name, p.legend, sr)
			}
		}
		if p.restarts != 2 || !contains(p.legend, "restart") {
			t.Errorf("plot %s: %d restart markers (legend %v), want 2", name, p.restarts, p.legend)
		}
	}
	if n := by["rates"].points["cmu-default"]; n != 6 {
		t.Errorf("the default cμ: %d points, want 6 (one segment per run)", n)
	}

}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
