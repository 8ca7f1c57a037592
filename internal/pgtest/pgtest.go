// Package pgtest starts a throwaway PostgreSQL cluster for tests: one per
// test binary, in a temporary directory, on a free port of 127.0.0.1,
// started on first use and stopped by Main when the tests are done.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	url := pgtest.DB(t) // a new, empty database of the cluster
//
// It looks for the server's programs in /usr/lib/postgresql/*/bin (Debian's
// postgresql package), or where SELFCMA_PG_BIN says; SELFCMA_PG_OPTS adds
// options of the server (-c name=value ...), for experiments. PostgreSQL refuses to
// run as root: as root the cluster is the postgres user's (initdb and pg_ctl
// run through runuser). Where no cluster can be started a test skips,
// saying why, unless the environment variable CI is set: then it fails.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// cluster is the test binary's one cluster.
var cluster clusterState

type clusterState struct {
	once sync.Once
	err  error
	dir  string // the temporary directory: data in dir/data, the socket in dir
	bin  string
	port int
	user string // the cluster's superuser
	as   []string
	dbs  atomic.Int64
}

// Main runs the tests and then stops the cluster if one was started; it
// returns m.Run's exit code.
func Main(m *testing.M) int {
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// URL returns the address of the cluster's postgres database, starting the
// cluster if it is not running; it skips tb (fails it when CI is set) when
// no cluster can be started.
func URL(tb testing.TB) string {
	tb.Helper()
	cluster.once.Do(func() { cluster.err = start() })
	if cluster.err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL: %v (CI is set: a test that needs PostgreSQL fails without it)", cluster.err)
		}
		tb.Skipf("SKIP: PostgreSQL: %v (apt-get install postgresql)", cluster.err)
	}
	return cluster.url("postgres")
}

// DB creates a new, empty database in the cluster and returns its URL.
// It is dropped at the end of the cluster, not of tb.
func DB(tb testing.TB) string {
	tb.Helper()
	URL(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), cluster.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, cluster.url("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	return cluster.url(name)
}

func (c *clusterState) url(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", c.user, c.port, db)
}

// binDir finds the directory of initdb and pg_ctl.
func binDir() (string, error) {
	if d := os.Getenv("SELFCMA_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// The latest version: sort by the number, not the text.
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no initdb and pg_ctl in /usr/lib/postgresql/*/bin or on PATH: not installed")
}

func start() error {
	bin, err := binDir()
	if err != nil {
		return err
	}
	cluster.bin = bin
	dir, err := os.MkdirTemp("", "selfcma-pg-")
	if err != nil {
		return err
	}
	cluster.dir = dir
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, and no postgres user to run the cluster as: %w", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
		cluster.as = []string{"runuser", "-u", "postgres", "--"}
		cluster.user = "postgres"
	} else {
		u, err := user.Current()
		if err != nil {
			return err
		}
		cluster.user = u.Username
	}
	data := filepath.Join(dir, "data")
	if out, err := cluster.run("initdb", "-D", data, "--auth=trust", "-U", cluster.user, "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// A free port: taken, then let go, and the cluster takes it a moment
	// later; another process may have taken it meanwhile: try another.
	var out []byte
	for range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		cluster.port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200 %s", cluster.port, dir, os.Getenv("SELFCMA_PG_OPTS"))
		if out, err = cluster.run("pg_ctl", "-w", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "start"); err == nil {
			return nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		if !strings.Contains(string(log), "already in use") {
			stop()
			return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
		}
	}
	stop()
	return fmt.Errorf("pg_ctl start: no free port in 5 tries\n%s", out)
}

func (c *clusterState) run(prog string, args ...string) ([]byte, error) {
	argv := append(append([]string{}, c.as...), append([]string{filepath.Join(c.bin, prog)}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// stop stops the cluster (fast: its data is thrown away) and removes its
// directory.
func stop() error {
	if cluster.dir == "" {
		return nil
	}
	var err error
	data := filepath.Join(cluster.dir, "data")
	if _, serr := os.Stat(filepath.Join(data, "postmaster.pid")); serr == nil {
		if out, cerr := cluster.run("pg_ctl", "-w", "-D", data, "-m", "immediate", "stop"); cerr != nil {
			err = fmt.Errorf("pg_ctl stop: %v\n%s", cerr, out)
		}
	}
	if rerr := os.RemoveAll(cluster.dir); rerr != nil && err == nil {
		err = rerr
	}
	cluster.dir = ""
	return err
}

// BinDir returns the directory of the cluster's programs (pg_dump, psql,
// ...), starting the cluster if it is not running; it skips tb as URL does.
func BinDir(tb testing.TB) string {
	tb.Helper()
	URL(tb)
	return cluster.bin
}
