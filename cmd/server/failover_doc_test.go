package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/pgtest"
)

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// docs/operations.md's "Failover" runs as written (on free ports, in a
// directory of its own; as root, as the user postgres, since PostgreSQL
// refuses root): a primary and its synchronous standby, two servers on
// both, a tell, the primary killed, 503 with Retry-After, the standby
// promoted, the next tell.
func TestDocsFailover(t *testing.T) {
	blocks := docBlocks(t, "docs/operations.md", "## Failover")
	if len(blocks) != 5 {
		t.Fatalf("%d sh blocks in the section, want 5", len(blocks))
	}
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	bin := serverBinary(t)
	pgBin := pgtest.BinDir(t)
	dir, err := os.MkdirTemp("", "selfcma-failover-")
	if err != nil {
		t.Fatal(err)
	}
	pids := func(file string) []int {
		b, _ := os.ReadFile(filepath.Join(dir, file))
		var out []int
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		return out
	}
	t.Cleanup(func() {
		// Whatever happened, nothing of the section outlives the test.
		for _, pid := range pids("servers.pid") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, d := range []string{"primary", "standby"} {
			if b, err := os.ReadFile(filepath.Join(dir, d, "postmaster.pid")); err == nil {
				if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil {
					syscall.Kill(pid, syscall.SIGQUIT)
				}
			}
		}
		time.Sleep(time.Second)
		os.RemoveAll(dir)
	})
	var as []string
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root, and no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	// The binary where the section's user can run it.
	src, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(filepath.Join(dir, "selfcma-server"), os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		dst.Close()
	}
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PG=" + pgBin, "P1=" + freePort(t), "P2=" + freePort(t), "PORTS=" + freePort(t) + " " + freePort(t), "PATH=" + os.Getenv("PATH")}
	argv := append(append(as, "env"), env...)
	argv = append(argv, "bash", "-c", "set -euo pipefail\n"+strings.Join(blocks, "\n"))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		logs, _ := exec.Command("sh", "-c", "cat "+dir+"/*.log").CombinedOutput()
		t.Fatalf("the section failed: %v\n%s\nlogs:\n%s", err, out, logs)
	}
	t.Logf("the section ran in %v", time.Since(start).Round(time.Millisecond))
	for _, want := range []string{`(?m)^standby1\|sync$`, `(?m)^generation 1$`, `(?m)^HTTP/1\.1 503 Service Unavailable\r?$`, `(?mi)^Retry-After: 2\r?$`, `(?m)^generation 2$`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the output lacks %s:\n%s", want, out)
		}
	}
	// kill sent SIGTERM: each server shuts down by itself.
	deadline := time.Now().Add(2 * time.Minute)
	for _, pid := range pids("servers.pid") {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("server %d still runs 2 minutes after the section's kill", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
