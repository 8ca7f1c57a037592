package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/pgtest"
)

// docs/operations.md's "Running several servers" runs as written: three servers on
// one database (the test's throwaway cluster, on free ports), a client
// taking them in turn, pg_dump and -check, and the servers stopped.
func TestReadmeSeveralServers(t *testing.T) {
	blocks := docBlocks(t, "docs/operations.md", "## Running several servers")
	if len(blocks) != 4 {
		t.Fatalf("%d sh blocks in the section, want 4", len(blocks))
	}
	needTools(t, "bash", "curl", "python3")
	bin := serverBinary(t)
	db := pgtest.DB(t)
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "selfcma-server")); err != nil {
		t.Fatal(err)
	}
	var ports []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		ln.Close()
	}
	// Whatever happens, no server outlives the test.
	pids := func() []int {
		b, _ := os.ReadFile(filepath.Join(dir, "servers.pid"))
		var out []int
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		return out
	}
	t.Cleanup(func() {
		for _, pid := range pids() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+strings.Join(blocks, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DB="+db, "PORTS="+strings.Join(ports, " "),
		"PATH="+pgtest.BinDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		logs, _ := exec.Command("sh", "-c", "cat "+dir+"/server-*.log").CombinedOutput()
		t.Fatalf("the section failed: %v\n%s\nserver logs:\n%s", err, out, logs)
	}
	for _, want := range []string{`(?m)^generation 10$`, `(?m)^checked postgres://\S+: sessions 1, history entries 10, problems 0$`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the output lacks %s:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "selfcma.dump")); err != nil || fi.Size() == 0 {
		t.Errorf("pg_dump wrote no dump: %v", err)
	}
	if n := len(pids()); n != 3 {
		t.Errorf("servers.pid has %d servers, want 3", n)
	}
	// kill sent SIGTERM: each server shuts down by itself.
	deadline := time.Now().Add(2 * time.Minute)
	for _, pid := range pids() {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("server %d still runs 2 minutes after the section's kill", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, p := range ports {
		log, _ := os.ReadFile(filepath.Join(dir, "server-"+p+".log"))
		if !strings.Contains(string(log), "store=postgres") || !strings.Contains(string(log), "msg=stopped") {
			t.Errorf("server on port %s: %s", p, fmt.Sprint(string(log)))
		}
	}
}
