package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a throwaway cluster of a test's own, which the test may stop,
// start, freeze, kill, or give a streaming standby: for the tests of what
// the servers do when the database fails. It is removed when the test
// ends.
type Cluster struct {
	dir, data string
	bin       string
	port      int
	user      string
	as        []string
	conf      []string // -c name=value settings of its start
}

// NewCluster initdb's and starts a cluster of tb's own on a free port,
// with the settings conf ("name=value", as -c takes them). It skips tb (fails
// it when CI is set) where no cluster can be started, as URL does.
func NewCluster(tb testing.TB, conf ...string) *Cluster {
	tb.Helper()
	c, err := newCluster(conf)
	if err == nil {
		err = c.initdb()
	}
	if err == nil {
		err = c.start()
	}
	if err != nil {
		if c != nil {
			c.remove()
		}
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL: %v (CI is set: a test that needs PostgreSQL fails without it)", err)
		}
		tb.Skipf("SKIP: PostgreSQL: %v (apt-get install postgresql)", err)
	}
	tb.Cleanup(c.remove)
	return c
}

func newCluster(conf []string) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, conf: conf}
	if c.dir, err = os.MkdirTemp("", "selfcma-pgc-"); err != nil {
		return nil, err
	}
	c.data = filepath.Join(c.dir, "data")
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return c, fmt.Errorf("running as root, and no postgres user to run the cluster as: %w", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return c, err
		}
		c.as, c.user = []string{"runuser", "-u", "postgres", "--"}, "postgres"
	} else {
		u, err := user.Current()
		if err != nil {
			return c, err
		}
		c.user = u.Username
	}
	return c, nil
}

func (c *Cluster) initdb() error {
	if out, err := c.run("initdb", "-D", c.data, "--auth=trust", "-U", c.user, "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return nil
}

// start starts the cluster on a free port (a new one the first time, the
// same one after).
func (c *Cluster) start() error {
	fresh := c.port == 0
	var out []byte
	for range 5 {
		if fresh {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			c.port = ln.Addr().(*net.TCPAddr).Port
			ln.Close()
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", c.port, c.dir)
		for _, s := range c.conf {
			opts += " -c " + s
		}
		var err error
		if out, err = c.run("pg_ctl", "-w", "-t", "120", "-D", c.data, "-l", filepath.Join(c.dir, "log"), "-o", opts, "start"); err == nil {
			return nil
		}
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		if !fresh || !strings.Contains(string(log), "already in use") {
			return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
		}
	}
	return fmt.Errorf("pg_ctl start: no free port in 5 tries\n%s", out)
}

func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	argv := append(append([]string{}, c.as...), append([]string{filepath.Join(c.bin, prog)}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// remove stops what runs of the cluster and removes its directory.
func (c *Cluster) remove() {
	if c.dir == "" {
		return
	}
	c.Continue(nil)
	if pids := c.pids(); len(pids) > 0 {
		c.run("pg_ctl", "-w", "-D", c.data, "-m", "immediate", "stop")
		for _, p := range c.pids() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	os.RemoveAll(c.dir)
	c.dir = ""
}

// Port is the cluster's port on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// Host is the cluster's host:port.
func (c *Cluster) Host() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// URL is the address of the cluster's database db.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", c.user, c.Host(), db)
}

// User is the cluster's superuser.
func (c *Cluster) User() string { return c.user }

// BinDir is the directory of the cluster's programs.
func (c *Cluster) BinDir() string { return c.bin }

// CreateDB creates the database db and returns its URL.
func (c *Cluster) CreateDB(tb testing.TB, db string) string {
	tb.Helper()
	c.Exec(tb, "postgres", "CREATE DATABASE "+db)
	return c.URL(db)
}

// Exec runs sql in the database db.
func (c *Cluster) Exec(tb testing.TB, db, sql string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL(db))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		tb.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Stop stops the cluster with pg_ctl's mode (fast, immediate), waiting.
func (c *Cluster) Stop(tb testing.TB, mode string) {
	tb.Helper()
	if out, err := c.run("pg_ctl", "-w", "-D", c.data, "-m", mode, "stop"); err != nil {
		tb.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Start starts the stopped cluster again, on its port.
func (c *Cluster) Start(tb testing.TB) {
	tb.Helper()
	if err := c.start(); err != nil {
		tb.Fatal(err)
	}
}

// Postmaster is the process id of the cluster's postmaster (0: none).
func (c *Cluster) Postmaster() int {
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// pids are the postmaster's process id and its children's.
func (c *Cluster) pids() []int {
	pm := c.Postmaster()
	if pm == 0 {
		return nil
	}
	pids := []int{pm}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, not ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pm {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// Freeze stops every process of the cluster with SIGSTOP: its sockets stay
// open and answer nothing, as a hung machine's would.
func (c *Cluster) Freeze(tb testing.TB) {
	tb.Helper()
	pids := c.pids()
	if len(pids) == 0 {
		tb.Fatal("pgtest: freeze: the cluster does not run")
	}
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGSTOP)
	}
}

// Continue undoes Freeze (tb may be nil).
func (c *Cluster) Continue(tb testing.TB) {
	for _, p := range c.pids() {
		syscall.Kill(p, syscall.SIGCONT)
	}
}

// Kill ends the postmaster with SIGKILL, as a crash of its machine would
// (its backends notice and exit by themselves).
func (c *Cluster) Kill(tb testing.TB) {
	tb.Helper()
	pm := c.Postmaster()
	if pm == 0 {
		tb.Fatal("pgtest: kill: the cluster does not run")
	}
	if err := syscall.Kill(pm, syscall.SIGKILL); err != nil {
		tb.Fatalf("pgtest: kill %d: %v", pm, err)
	}
}

// Standby makes a streaming-replication standby of c (pg_basebackup -R),
// connecting to it as application name name, with the settings conf, and
// starts it on a port of its own.
func (c *Cluster) Standby(tb testing.TB, name string, conf ...string) *Cluster {
	tb.Helper()
	s, err := newCluster(conf)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.remove)
	if out, err := s.run("pg_basebackup", "-D", s.data, "-R", "-X", "stream", "--no-sync",
		"-d", fmt.Sprintf("host=127.0.0.1 port=%d user=%s application_name=%s", c.port, c.user, name)); err != nil {
		tb.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	// pg_basebackup -R has written primary_conninfo (with the
	// application name, which synchronous_standby_names names) and
	// standby.signal.
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Promote promotes the standby to a primary (pg_ctl promote), waiting
// until it takes writes.
func (c *Cluster) Promote(tb testing.TB) {
	tb.Helper()
	if out, err := c.run("pg_ctl", "-w", "-t", "120", "-D", c.data, "promote"); err != nil {
		tb.Fatalf("pg_ctl promote: %v\n%s", err, out)
	}
}

// Follow makes the stopped cluster c, a former primary shut down cleanly,
// a standby of primary (standby.signal, primary_conninfo with application
// name name) and starts it: the second half of a switchover.
func (c *Cluster) Follow(tb testing.TB, primary *Cluster, name string) {
	tb.Helper()
	conninfo := fmt.Sprintf("\nprimary_conninfo = 'host=127.0.0.1 port=%d user=%s application_name=%s'\n", primary.port, primary.user, name)
	for _, f := range []struct{ name, text string }{{"standby.signal", ""}, {"postgresql.auto.conf", conninfo}} {
		p := filepath.Join(c.data, f.name)
		fh, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = fh.WriteString(f.text)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			tb.Fatal(err)
		}
		if len(c.as) > 0 {
			if out, err := exec.Command("chown", "postgres:", p).CombinedOutput(); err != nil {
				tb.Fatalf("chown %s: %v\n%s", p, err, out)
			}
		}
	}
	if err := c.start(); err != nil {
		tb.Fatal(err)
	}
}
