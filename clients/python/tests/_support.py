"""Test support: the package from this source tree, the real server binary
built from the repository, objective functions (module level, so that
process pools can pickle them)."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PKG_ROOT = TESTS.parent  # clients/python
REPO_ROOT = PKG_ROOT.parent.parent

# The package of this tree, before any installed copy.
if str(PKG_ROOT) not in sys.path:
    sys.path.insert(0, str(PKG_ROOT))


def ellipsoid(x):
    """f(x) = Σ 10^(6 i/(n−1)) x_i², i = 0..n−1."""
    n = len(x)
    return sum(10 ** (6 * i / (n - 1)) * v * v for i, v in enumerate(x))


def sphere(x):
    return sum(v * v for v in x)


class FakeArray:
    """Stands for a numpy array: only tolist()."""

    def __init__(self, data):
        self._data = data

    def tolist(self):
        if not isinstance(self._data, (list, tuple)):
            return self._data
        return [list(r) if isinstance(r, (list, tuple)) else r for r in self._data]


def go_command():
    go = shutil.which("go")
    if go is None and os.access("/usr/local/go/bin/go", os.X_OK):
        go = "/usr/local/go/bin/go"
    return go


_binary = None
_workdir = None


def workdir():
    global _workdir
    if _workdir is None:
        _workdir = tempfile.mkdtemp(prefix="selfcma-pytest-")
        atexit.register(shutil.rmtree, _workdir, True)
    return _workdir


def server_binary():
    """The server built from this repository (once per test run). Skips
    when there is no Go toolchain or no cmd/server; fails when it does not
    build."""
    global _binary
    if _binary is not None:
        return _binary
    if not (REPO_ROOT / "cmd" / "server").is_dir():
        raise unittest.SkipTest(f"no cmd/server in {REPO_ROOT}: the server does not exist yet")
    go = go_command()
    if go is None:
        raise unittest.SkipTest("no Go toolchain (go on PATH or /usr/local/go/bin/go) to build the server")
    out = os.path.join(workdir(), "server")
    t = time.monotonic()
    p = subprocess.run(
        [go, "build", "-o", out, "./cmd/server"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    if p.returncode != 0:
        raise RuntimeError(f"go build ./cmd/server failed:\n{p.stdout}{p.stderr}")
    sys.stderr.write(f"[built the server in {time.monotonic() - t:.1f} s] ")
    _binary = out
    return out


def tls_pair():
    """A self-signed certificate for 127.0.0.1 and its key, (cert, key)
    paths, made by the Go toolchain's crypto/tls/generate_cert.go (Python's
    standard library makes no certificates)."""
    go = go_command()
    if go is None:
        raise unittest.SkipTest("no Go toolchain to make a certificate")
    goroot = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
    d = tempfile.mkdtemp(prefix="tls-", dir=workdir())
    p = subprocess.run(
        [go, "run", os.path.join(goroot, "src", "crypto", "tls", "generate_cert.go"), "--host", "127.0.0.1"],
        cwd=d,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if p.returncode != 0:
        raise RuntimeError(f"generate_cert.go failed:\n{p.stdout}{p.stderr}")
    return os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")


_LISTENING = re.compile(r"msg=listening addr=(\S+)")


class Server:
    """The real server on a free port of 127.0.0.1, with its own bbolt file.

    start() reads the address from its first log line; kill() is SIGKILL;
    start() again reopens the same file on the same port.
    """

    def __init__(self, token=None, args=(), tls=None):
        """tls: (cert, key) files to serve HTTPS with."""
        self.binary = server_binary()
        self.dir = tempfile.mkdtemp(prefix="srv-", dir=workdir())
        self.db = os.path.join(self.dir, "x.db")
        self.token = token
        self.args = list(args)
        self.tls = tls
        if tls:
            self.args += ["-tls-cert", tls[0], "-tls-key", tls[1]]
        self.addr = "127.0.0.1:0"
        self.proc = None
        self._log = None
        self.starts = 0

    @property
    def url(self):
        return ("https://" if self.tls else "http://") + self.addr

    def start(self, timeout=120.0):
        assert self.proc is None, "already running"
        self.starts += 1
        logpath = os.path.join(self.dir, f"server-{self.starts}.log")
        self._log = open(logpath, "w")
        cmd = [self.binary, "-addr", self.addr, "-db", self.db] + self.args
        if self.token:
            cmd += ["-token", self.token]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SELFCMA_")}
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(logpath) as f:
                m = _LISTENING.search(f.read())
            if m:
                self.addr = m.group(1)
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        with open(logpath) as f:
            text = f.read()
        self.kill()
        raise RuntimeError(f"the server did not start ({' '.join(cmd)}):\n{text}")

    def kill(self, sig=signal.SIGKILL):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self):
        """Graceful: SIGTERM."""
        self.kill(signal.SIGTERM)

    def close(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


def child_env(**extra):
    """The environment of a Python subprocess that imports this tree's
    package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PKG_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


def need(module):
    """Imports an optional module a test needs (numpy, optuna): skips the
    test with a visible reason when it is missing, and fails instead when
    the environment variable CI is set."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        msg = f"{module} is not installed for {sys.executable} ({e}); on Debian: apt-get install python3-{module}"
        if os.environ.get("CI"):
            raise AssertionError(f"CI is set and {msg}") from e
        raise unittest.SkipTest(msg) from None


def rosen(x):
    """Rosenbrock's function, written for numpy arrays (slices and
    arithmetic on whole arrays): it fails on lists."""
    return float(sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2))


def always_fails(x):
    raise ZeroDivisionError(f"cannot evaluate {len(x)} coordinates")


def returns_none(x):
    return None


def fails_on_first_half(x):
    """Fails where x[0] < 0 (about half the points near 0)."""
    if x[0] < 0:
        raise ValueError("negative x[0]")
    return sum(v * v for v in x)


class StubClients:
    """A TestCase mixin: client(url) makes a Client whose backoff sleeps
    are recorded in self.sleeps instead of slept, closed at cleanup."""

    def client(self, url, **kw):
        from selfcma import Client

        c = Client(url, **kw)
        self.sleeps = []
        c._t._sleep = self.sleeps.append
        self.addCleanup(c.close)
        return c


class FakeTransport:
    """Answers the requests of one session as the server would, and records
    them: create, get, claim (the candidates of generation 0 in turn, each
    the session's x0 shifted by its index), tell, inject."""

    def __init__(self, inject_status=200, population_size=4):
        self.calls = []
        self.state = None
        self.claimed = 0
        self.inject_status = inject_status
        self.population_size = population_size
        self.url = "http://fake"
        self.urls = [self.url]

    def route(self):
        return None

    def stop(self, best):
        """The session stops, with best point best."""
        self.state = dict(self.state, status="stopped", stop_reasons=[{"name": "tol_fun", "value": 1e-12}],
                          best={"x": best, "f": 0.0, "generation": 0})

    def request(self, method, path, body=None, query=None, idempotent=True, raw=False, headers=None, route=None):
        from selfcma import NotFound, Stopped

        self.calls.append((method, path, body, dict(query or {})))
        me = "/v1/sessions/" + (self.state or {}).get("id", "")
        if (method, path) == ("POST", "/v1/sessions"):
            self.x0 = body["x0"]
            n = int(self.state["id"][1:]) + 1 if self.state else 1
            self.claimed = 0
            self.state = {"id": f"s{n}", "dimension": len(body["x0"]), "population_size": self.population_size,
                          "status": "running", "generation": 0, "evaluations": 0, "stop_reasons": [],
                          "metadata": body.get("metadata"), "best": None, "mean": body["x0"], "sigma": body["sigma0"]}
            return dict(self.state)
        if (method, path) == ("GET", me):
            return dict(self.state)
        if (method, path) == ("POST", me + "/claim"):
            if self.state["status"] == "stopped":
                raise Stopped("stopped", code="stopped", status=409, details=self.state)
            k = self.claimed
            self.claimed += 1
            x = [v + 0.01 * k for v in self.x0]
            return {"generation": 0, "index": k, "x": x, "expires_at": "2026-01-01T00:00:00Z"}
        if (method, path) == ("POST", me + "/tell"):
            return dict(self.state)
        if (method, path) == ("GET", me + "/covariance"):  # a server older than the endpoint
            raise NotFound("no such route: " + path, code="not_found", method=method, url=path, status=404)
        if (method, path) == ("POST", me + "/inject"):
            if self.inject_status == 404:
                raise NotFound("no such route", code="not_found", method=method, url=path, status=404)
            return {"queued": len(body["points"]), "generation": 1}
        raise AssertionError(f"unexpected request {method} {path}")

    def of(self, method, suffix):
        return [c for c in self.calls if c[0] == method and c[1].endswith(suffix)]


def fake_client(transport):
    """A Client whose requests go to transport (a FakeTransport)."""
    from selfcma import Client

    c = Client("http://127.0.0.1:1")
    c._t = transport
    return c


@contextlib.contextmanager
def quiet_logs():
    """Drops the selfcma logger's warnings (where they may or may not come)."""
    logger = logging.getLogger("selfcma")
    handler, propagate = logging.NullHandler(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class PgCluster:
    """A throwaway PostgreSQL cluster on a free port of 127.0.0.1, as
    internal/pgtest starts one: initdb and pg_ctl from
    /usr/lib/postgresql/*/bin (or SELFCMA_PG_BIN), as the postgres user
    when run as root (PostgreSQL refuses root). One per test run, stopped
    at exit."""

    def __init__(self):
        self.bin = self._bin_dir()
        self.dir = tempfile.mkdtemp(prefix="selfcma-pg-")
        self.as_ = []
        if os.geteuid() == 0:
            import pwd

            try:
                pg = pwd.getpwnam("postgres")
            except KeyError:
                raise unittest.SkipTest("running as root, and no postgres user to run the cluster as") from None
            os.chown(self.dir, pg.pw_uid, pg.pw_gid)
            self.as_ = ["runuser", "-u", "postgres", "--"]
            self.user = "postgres"
        else:
            import getpass

            self.user = getpass.getuser()
        self.data = os.path.join(self.dir, "data")
        self._run("initdb", "-D", self.data, "--auth=trust", "-U", self.user, "--no-sync", "-E", "UTF8", "--locale=C")
        for _ in range(5):
            self.port = free_port()
            opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200"
            p = self._run("pg_ctl", "-w", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-o", opts, "start",
                          check=False)
            if p.returncode == 0:
                atexit.register(self.stop)
                return
            with open(os.path.join(self.dir, "log")) as f:
                log = f.read()
            if "already in use" not in log:
                break
        self.stop()
        raise RuntimeError(f"pg_ctl start failed:\n{p.stdout}{p.stderr}\n{log}")

    @staticmethod
    def _bin_dir():
        d = os.environ.get("SELFCMA_PG_BIN")
        if d:
            return d
        dirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
        for p in reversed(dirs):
            if (p / "pg_ctl").exists():
                return str(p)
        pg_ctl = shutil.which("pg_ctl")
        if pg_ctl:
            return os.path.dirname(pg_ctl)
        raise unittest.SkipTest("no initdb and pg_ctl in /usr/lib/postgresql/*/bin or on PATH: apt-get install postgresql")

    def _run(self, prog, *args, check=True):
        p = subprocess.run(self.as_ + [os.path.join(self.bin, prog), *args], cwd=self.dir, capture_output=True,
                           text=True, timeout=300)
        if check and p.returncode != 0:
            raise RuntimeError(f"{prog} failed:\n{p.stdout}{p.stderr}")
        return p

    def url(self, db, scheme="postgres"):
        """The URL of database db; scheme postgresql for SQLAlchemy
        (Optuna's storage)."""
        return f"{scheme}://{self.user}@127.0.0.1:{self.port}/{db}?sslmode=disable"

    def create_db(self, name):
        """Creates an empty database and returns its name."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, name)
        return name

    def stop(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self._run("pg_ctl", "-w", "-D", self.data, "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


_pg = None


def pg_cluster():
    """The test run's PostgreSQL cluster, started on first use. Skips when
    none can be started (PostgreSQL is not installed), and fails instead
    when the environment variable CI is set."""
    global _pg
    if _pg is None:
        try:
            _pg = PgCluster()
        except unittest.SkipTest as e:
            if os.environ.get("CI"):
                raise AssertionError(f"CI is set and PostgreSQL: {e}") from None
            raise
    return _pg


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
