"""Client, Session and Result: pycma-style ask/tell over the selfcma service."""

from __future__ import annotations

import concurrent.futures
import copy
import logging
import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from . import _convert as conv
from ._http import Transport
from .errors import Conflict, Stopped

__all__ = ["Client", "Session", "Result", "Claim"]

log = logging.getLogger("selfcma")

DEFAULT_URL = "http://127.0.0.1:8080"


@dataclass(frozen=True)
class Result:
    """The state of a session at a glance (``Session.result``).

    Attributes:
        xbest: the best point told so far (None before the first number).
        fbest: its fitness value (None before the first number).
        best_generation: the generation that told it.
        evaluations: values told so far (failed ones included).
        generation: generations told so far, which is the pending one.
        mean: the mean of the search distribution.
        sigma: the step size σ.
        stop: {criterion: value} once stopped, {} while running.
        status: ``"running"`` or ``"stopped"``.
        session_id: the session's id.
    """

    xbest: Optional[List[float]]
    fbest: Optional[float]
    best_generation: Optional[int]
    evaluations: int
    generation: int
    mean: List[Optional[float]]
    sigma: Optional[float]
    stop: Dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    session_id: str = ""


@dataclass(frozen=True)
class Claim:
    """A candidate leased to this worker (``Session.claim``).

    Attributes:
        generation: the generation it is of.
        index: its index in the generation's batch.
        x: the point, a list of floats.
        expires_at: when the lease ends (RFC 3339); told later, the value
            is still taken unless another worker told the point first.
    """

    generation: int
    index: int
    x: List[float]
    expires_at: str


def _stop_dict(reasons):
    return {r.get("name"): r.get("value") for r in reasons or []}


def _positions(X, C):
    """The indices j with X[i] == C[j], one for each point of X (each at most
    once), or None when X is not a part of C."""
    where = {}
    for j, c in enumerate(C):
        where.setdefault(tuple(c), []).append(j)
    idx = []
    for x in X:
        js = where.get(tuple(x))
        if not js:
            return None
        idx.append(js.pop(0))
    return idx


def _permutation(X, C):
    """perm with X[i] == C[perm[i]] for every i, or None when X is not a
    reordering of C."""
    if len(X) != len(C):
        return None
    if X == C:
        return list(range(len(C)))
    return _positions(X, C)


class Session:
    """One optimization on the server, driven like pycma's
    ``CMAEvolutionStrategy``::

        es = client.create([1.0] * 10, 0.5)
        while not es.stop():
            X = es.ask()                      # the generation's λ points
            es.tell(X, [f(x) for x in X])     # None for a failed evaluation
        print(es.result.xbest, es.result.fbest)

    Get one from ``Client.create`` (a new session) or ``Client.session(id)``
    (attach to an existing one, e.g. to resume after a crash: ``ask`` hands
    out the pending batch again, the same points).

    The session's state (``stop()``, ``result``, ``hyperparameters`` and the
    properties) is the one the server sent with the last create, attach or
    tell of this object; ``refresh()`` reads it again (when another client
    drives the same session).

    A generation of the loop is one request: ``tell`` asks the server for
    the next batch with its answer (``tell?next=true``), and the ``ask``
    after it hands that batch out.
    """

    def __init__(self, client, state):
        self._client = client
        self._state = state
        self._batch = None  # (generation, candidates) of the last ask
        self._told = None  # (generation, candidates) of the last tell
        self._next = None  # (generation, candidates) the last tell answered with

    def __repr__(self):
        s = self._state
        return (
            f"<selfcma.Session {s.get('id')} {s.get('algorithm')} n={s.get('dimension')} "
            f"λ={s.get('population_size')} generation={s.get('generation')} {s.get('status')}>"
        )

    @property
    def _path(self):
        return "/v1/sessions/" + self.id

    # The loop.

    def stop(self):
        """{} while the session runs; once it has stopped, {criterion: value}
        for every termination criterion that stopped it (``tol_fun``,
        ``max_evaluations``, ...). Truthy exactly when stopped, so
        ``while not es.stop():`` drives the loop."""
        if self._state.get("status") != "stopped":
            return {}
        return _stop_dict(self._state.get("stop_reasons"))

    def ask(self):
        """The λ candidate points of the pending generation, as a list of
        lists of floats. Asking again before telling returns the same points
        (also after a restart of the server, and from another process).

        The first ask after a tell costs no request: the tell's answer
        carried the batch (``tell?next=true``).

        Raises Stopped when the session has stopped.
        """
        if self._next is not None and self._next[0] == self._state.get("generation"):
            g, cands = self._next
            self._next = None
            self._batch = (g, cands)
            return [list(x) for x in cands]
        self._next = None
        try:
            b = self._client._t.request("GET", self._path + "/ask")
        except Stopped:
            self._refresh_quietly()
            raise
        g, cands = b["generation"], b["candidates"]
        self._batch = (g, cands)
        if g != self._state.get("generation"):
            self._refresh_quietly()  # another client advanced it
        return [list(x) for x in cands]

    def tell(self, X, fitness):
        """Tells the fitness values of the points X of the pending generation
        and advances the session one generation.

        X: the points ``ask`` returned (lists, or an array with ``tolist()``),
            in any order; fitness[i] is the value of X[i].
        fitness: λ numbers; None for a failed evaluation (it ranks worst).
            NaN and +inf are told as None; -inf is refused (ValueError).

        Raises ValueError when X is not the pending batch (the points must be
        told unmodified), Conflict when another client told this generation
        first, Stopped when the session has stopped. A tell retried after a
        lost answer applies once: telling the same X and values again is
        answered as the first time.
        """
        X = conv.matrix(X, "X")
        values = conv.fitness(fitness, len(X))
        gen, cands, perm = self._find(X, _permutation, "is not")
        ordered = [None] * len(values)
        for i, j in enumerate(perm):
            ordered[j] = values[i]
        self._send_tell(gen, cands, {"generation": gen, "fitness": ordered})

    def tell_partial(self, X, fitness):
        """Tells the values of some points of the pending generation, for
        evaluations that finish one by one: the server holds them (they
        survive a crash of this process or of the server) until every point
        of the generation has a value, and the call that tells the last ones
        advances the session as ``tell`` would.

        X: some of the points ``ask`` returned, unmodified, in any order;
            fitness[i] is the value of X[i] (None for a failed evaluation).

        Returns True when this call completed the generation. Telling a point
        again with the same value changes nothing; with another value it
        raises Conflict. ``untold()`` lists the points still without a value.
        """
        X = conv.matrix(X, "X")
        values = conv.fitness(fitness, len(X))
        if not X:
            raise ValueError("X is empty: tell at least one point")
        gen, cands, indices = self._find(X, _positions, "holds points that are not in")
        # The next batch comes with the answer only when this part should
        # complete the generation, as far as this object knows.
        held = self._held() if self._state.get("generation") == gen else set()
        last = len(held | set(indices)) == len(cands)
        return self._send_tell(gen, cands, {"generation": gen, "indices": indices, "fitness": values}, last)

    def _send_tell(self, gen, cands, body, next_batch=True):
        """Sends the tell body of generation gen, whose batch is cands (with
        next=true unless next_batch is False), and takes the answer; True
        when the generation was applied."""
        self._next = None
        try:
            q = {"next": "true"} if next_batch else None
            state = self._client._t.request("POST", self._path + "/tell", body, query=q)
        except Stopped:
            self._refresh_quietly()
            raise
        nxt = state.pop("next", None)
        self._state = state
        done = state.get("generation") != gen
        if done:
            self._told = (gen, [list(c) for c in cands])
            self._batch = None
        if nxt is not None:
            self._next = (nxt["generation"], nxt["candidates"])
        return done

    def claim(self, lease=None, worker=None):
        """Leases one point of the pending generation to this worker: one
        that has no value and that no other worker holds, for ``lease``
        seconds (None: the server's default, an hour). Returns a Claim, or
        None when every point without a value is leased (try again later:
        a point whose lease runs out is handed out again, and when the
        generation completes the next one's points are free). Tell the
        value with ``tell_claim``. Raises Stopped when the session has
        stopped.

        worker: an id of this worker (visible ASCII, at most 128
            characters). While its lease runs and its point has no value,
            its claims answer that lease again, renewed for ``lease``
            seconds from now: a claim the client sends again after a lost
            answer leases nothing more, and a worker keeps its point while
            it evaluates by claiming again. Without an id, every claim
            leases another point."""
        return self._claim(lease, worker, None)

    def renew(self, claim, lease=None, worker=None):
        """Renews this worker's lease of the claimed point (for ``lease``
        seconds from now, if that is later) and returns the Claim with its
        new end. If the lease has run out meanwhile, it leases the point to
        this worker again, unless another worker has claimed it. Needs the worker's id (as given to ``claim``). Raises
        Conflict when the point's generation has passed, the point has a
        value, or another worker holds it."""
        if worker is None:
            raise ValueError("renew needs the worker id given to claim")
        return self._claim(lease, worker, claim)

    def _claim(self, lease, worker, claim):
        q = {}
        if lease is not None:
            q["lease"] = conv.integer(lease, "lease")
        if worker is not None:
            q["worker"] = str(worker)
        if claim is not None:
            q["generation"], q["index"] = claim.generation, claim.index
        try:
            c = self._client._t.request("POST", self._path + "/claim", query=q)
        except Stopped:
            self._refresh_quietly()
            raise
        if c.get("index") is None:
            return None
        return Claim(generation=c["generation"], index=c["index"], x=list(c["x"]), expires_at=c["expires_at"])

    def tell_claim(self, claim, value):
        """Tells the value of a claimed point (None for a failed evaluation);
        returns True when it completed the generation. Raises Conflict when
        the point's generation has passed with another value (or another
        worker told the point another value first), Stopped when the
        session has stopped."""
        v = conv.fitness_value(value, "value")
        gen = claim.generation
        try:
            self._state = self._client._t.request(
                "POST", self._path + "/tell", {"generation": gen, "indices": [claim.index], "fitness": [v]}
            )
        except Stopped:
            self._refresh_quietly()
            raise
        return self._state.get("generation") != gen

    def untold(self):
        """The points of the pending generation whose values the server does
        not hold yet (all of them unless ``tell_partial`` told some), read
        from the server: what is left to evaluate, for instance after a
        crash."""
        self.refresh()
        X = self.ask()
        held = self._held()
        return [x for i, x in enumerate(X) if i not in held]

    def _held(self):
        """The indices of the pending batch whose values the server holds,
        as of the last answer."""
        p = self._state.get("partial")
        if not p or self._batch is None or self._batch[0] != self._state.get("generation"):
            return set()
        return set(p.get("indices") or [])

    def _find(self, X, place, what):
        """(generation, candidates, place(X, candidates)) of the batch that
        place finds the points X in: the last asked, the last told, or the
        server's pending one (from another process, or asked through another
        Session object); ValueError if none."""
        for src in (self._batch, self._told):
            if src is not None:
                found = place(X, src[1])
                if found is not None:
                    return src[0], src[1], found
        b = self._client._t.request("GET", self._path + "/ask")
        g, cands = b["generation"], b["candidates"]
        found = place(X, cands)
        if found is None:
            raise ValueError(
                f"X {what} the batch of generation {g}, the pending one of session {self.id} "
                f"({len(cands)} points of dimension {self.dimension}): tell the points ask returned, unmodified"
            )
        self._batch = (g, cands)
        return g, cands, found

    # The state.

    def refresh(self):
        """Reads the session's state from the server; returns self."""
        self._state = self._client._t.request("GET", self._path)
        return self

    def _refresh_quietly(self):
        try:
            self.refresh()
        except Exception:  # the original error says more
            pass

    @property
    def info(self):
        """The session object as the server sent it last (a copy): id, name,
        algorithm, dimension, population_size, seed, status, stop_reasons,
        generation, evaluations, best, mean, sigma, hyperparameters,
        restarts, partial (the values held of the pending generation, or
        None), metadata, created_at, updated_at, links."""
        return copy.deepcopy(self._state)

    @property
    def result(self):
        """A Result: best x and f, evaluations, generation, mean, σ, stop
        reasons."""
        s = self._state
        best = s.get("best") or {}
        return Result(
            xbest=list(best["x"]) if best.get("x") is not None else None,
            fbest=best.get("f"),
            best_generation=best.get("generation"),
            evaluations=s.get("evaluations", 0),
            generation=s.get("generation", 0),
            mean=list(s.get("mean") or []),
            sigma=s.get("sigma"),
            stop=self.stop(),
            status=s.get("status", ""),
            session_id=s.get("id", ""),
        )

    @property
    def hyperparameters(self):
        """The learning rates the next update uses, c1, cmu and cc (adapted
        by self-CMA-ES), and the fixed c_sigma, d_sigma and mu_w."""
        return dict(self._state.get("hyperparameters") or {})

    id = property(lambda self: self._state["id"], doc="The session's id (pass it to Client.session to resume).")
    name = property(lambda self: self._state.get("name", ""), doc="The session's name.")
    algorithm = property(lambda self: self._state.get("algorithm"), doc='"self-cma-es" or "cma-es".')
    dimension = property(lambda self: self._state.get("dimension"), doc="n.")
    population_size = property(
        lambda self: self._state.get("population_size"), doc="λ of the pending generation (IPOP doubles it)."
    )
    popsize = population_size
    seed = property(lambda self: self._state.get("seed"), doc="The seed of the run.")
    status = property(lambda self: self._state.get("status"), doc='"running" or "stopped".')
    generation = property(lambda self: self._state.get("generation"), doc="Generations told (the pending one).")
    evaluations = property(lambda self: self._state.get("evaluations"), doc="Values told.")
    sigma = property(lambda self: self._state.get("sigma"), doc="The step size σ.")
    mean = property(lambda self: list(self._state.get("mean") or []), doc="The mean of the distribution.")

    def history(self, start=0, limit=None):
        """One record per told generation, from generation ``start``, at most
        ``limit`` (None = all): dicts with generation, run, lambda,
        evaluations, best, median, best_so_far, sigma, c1, cmu, cc,
        axis_ratio, restarted (and for self-CMA-ES aux_mean, aux_sigma,
        aux_feasible)."""
        q = {"from": conv.integer(start, "start") if start else None}
        if limit is not None:
            q["limit"] = conv.integer(limit, "limit")
        return self._client._t.request("GET", self._path + "/history", query=q)["records"]

    def end(self):
        """Ends the session on the server, keeping it and its history: its
        status becomes stopped, ``stop()`` then gives ``{"requested": g}``
        (g generations told), and ask and tell raise Stopped. Ending an
        ended session changes nothing."""
        self._state = self._client._t.request("POST", self._path + "/stop")
        self._next = None  # a batch a tell carried is not to be asked any more
        return self

    def delete(self):
        """Deletes the session and its history on the server."""
        self._client.delete(self.id)

    PROGRESS_HEADER = "  gen    evals       best f      sigma        c1       cmu        cc"

    def progress_line(self):
        """One line: generation, evaluations, best f, σ, c1, cmu, cc."""
        s = self._state
        hp = s.get("hyperparameters") or {}
        best = (s.get("best") or {}).get("f")
        return "{:5d} {:8d} {:>12} {:>10} {:>9} {:>9} {:>9}".format(
            s.get("generation", 0),
            s.get("evaluations", 0),
            _fmt(best, ".5e"),
            _fmt(s.get("sigma"), ".3e"),
            _fmt(hp.get("c1"), ".3g"),
            _fmt(hp.get("cmu"), ".3g"),
            _fmt(hp.get("cc"), ".3g"),
        )

    def disp(self, header=False, file=None):
        """Prints progress_line() (after PROGRESS_HEADER if header)."""
        out = file or sys.stdout
        if header:
            print(self.PROGRESS_HEADER, file=out)
        print(self.progress_line(), file=out, flush=True)


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


class _Call:
    """f wrapped so that its exceptions come back as data: whatever else a
    future raises is a fault of the executor, not a failed evaluation.
    Module level, so that it pickles for process pools."""

    def __init__(self, f):
        self.f = f

    def __call__(self, x):
        try:
            return True, self.f(x)
        except Exception as e:  # a failed evaluation; KeyboardInterrupt passes
            return False, f"{type(e).__name__}: {e}"


class Client:
    """A connection to a selfcma server.

    Args:
        url: the server, ``http://host:port`` (default http://127.0.0.1:8080),
            or ``https://host:port`` for a server started with -tls-cert.
        token: the bearer token when the server was started with one
            (sent as ``Authorization: Bearer <token>``).
        timeout: seconds to wait for each answer.
        retries: how many times a request is tried again after a connection
            failure, a timeout or a 502/503/504, with exponential backoff
            from ``backoff`` seconds up to ``max_backoff``; then
            ServerUnavailable. Every request is retried: ask only reads,
            the server applies a retried tell once, and a create carries an
            Idempotency-Key, so that sent again it makes no second session.
        cafile: for https, a PEM file of the certificates to trust instead
            of the system's (a self-signed server certificate, a private
            CA). The certificate is always verified; one not trusted raises
            ServerUnavailable at once, without retries.

    A Client is thread-safe and holds no connection open; it is a context
    manager for symmetry with other clients.

    Example (a server must run: ``go run ./cmd/server``)::

        import os
        from selfcma import Client

        def sphere(x):
            return sum(v * v for v in x)

        with Client(os.environ.get("SELFCMA_URL", "http://127.0.0.1:8080")) as client:
            es = client.create([1.0] * 5, 0.5, termination={"target_fitness": 1e-10})
            while not es.stop():
                X = es.ask()
                es.tell(X, [sphere(x) for x in X])
            print(es.result.fbest, es.stop())
    """

    def __init__(self, url=DEFAULT_URL, token=None, timeout=30, *, retries=8, backoff=0.25, max_backoff=8.0, cafile=None):
        self._t = Transport(
            url, token=token, timeout=timeout, retries=retries, backoff=backoff, max_backoff=max_backoff, cafile=cafile
        )

    @property
    def url(self):
        return self._t.url

    def __repr__(self):
        return f"<selfcma.Client {self._t.url}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Nothing to release (every request has its own connection)."""

    def request(self, method, path, body=None, query=None, idempotent=True):
        """A raw request to the server (``path`` like ``/v1/sessions``),
        with the token, the retries and the error mapping of the client;
        returns the decoded JSON answer."""
        return self._t.request(method, path, body=body, query=query, idempotent=idempotent)

    def health(self):
        """GET /healthz: {"status": "ok"} when the server runs."""
        return self._t.request("GET", "/healthz")

    def create(
        self,
        x0,
        sigma0,
        population_size=None,
        algorithm="self-cma-es",
        seed=None,
        bounds=None,
        restarts=None,
        termination=None,
        name=None,
        metadata=None,
        hyperparameters=None,
        idempotency_key=None,
    ):
        """Creates a session and returns it (a Session).

        Args:
            x0: the initial mean, n finite numbers (a list or an array).
            sigma0: the initial step size, > 0.
            population_size: λ; None for the server's default
                (self-cma-es: max(100, 4 + ⌊3 ln n⌋); cma-es: 4 + ⌊3 ln n⌋).
            algorithm: ``"self-cma-es"`` (default) or ``"cma-es"``.
            seed: an unsigned 64-bit integer; None lets the server draw one
                (``Session.seed`` reports it). The run is a pure function of
                the seed and the told values.
            bounds: a box every candidate lies in: ``[lower, upper]`` (each a
                number or n numbers, as in pycma) or
                ``{"lower": [...], "upper": [...]}``.
            restarts: ``"ipop"``, an int k (IPOP with at most k restarts) or
                the server's ``{"strategy": "ipop", "max": k}``.
            termination: ``{"target_fitness": 1e-8, "max_evaluations": 10000,
                "tol_fun": ..., "tol_x": ..., ...}`` (api/openapi.yaml).
            name: a label; metadata: any JSON object, echoed back.
            hyperparameters: self-cma-es only, ``"default"`` or
                ``"uniform"`` (the auxiliary CMA-ES's initial mean), or
                ``{"init": ...}``.
            idempotency_key: the create's Idempotency-Key (1 to 255
                visible ASCII characters); None draws a random UUID. The
                create is retried with it after a timeout or a lost answer,
                and the server makes at most one session for a key: pass
                your own to make a create that a crashed script runs again
                find the session of its first run (with the same
                arguments; others raise OutOfRange).

        Raises OutOfRange (a ValueError) or InvalidRequest for values the
        server refuses; TypeError or ValueError before sending for values
        that are not numbers.
        """
        x0 = conv.vector(x0, "x0")
        body = {"x0": x0, "sigma0": conv.number(sigma0, "sigma0")}
        if population_size is not None:
            body["population_size"] = conv.integer(population_size, "population_size")
        if algorithm is not None:
            body["algorithm"] = algorithm
        if seed is not None:
            body["seed"] = conv.integer(seed, "seed")
        if bounds is not None:
            body["bounds"] = conv.bounds(bounds, len(x0))
        if restarts is not None:
            if isinstance(restarts, str):
                restarts = {"strategy": restarts}
            elif not isinstance(restarts, dict):
                restarts = {"strategy": "ipop", "max": conv.integer(restarts, "restarts")}
            body["restarts"] = conv.plain_json(restarts)
        if termination is not None:
            body["termination"] = conv.plain_json(termination)
        if name is not None:
            body["name"] = name
        if metadata is not None:
            body["metadata"] = conv.plain_json(metadata)
        if hyperparameters is not None:
            if isinstance(hyperparameters, str):
                hyperparameters = {"init": hyperparameters}
            body["hyperparameters"] = conv.plain_json(hyperparameters)
        if idempotency_key is None:
            idempotency_key = str(uuid.uuid4())
        state = self._t.request("POST", "/v1/sessions", body, headers={"Idempotency-Key": idempotency_key})
        return Session(self, state)

    def session(self, session_id):
        """Attaches to an existing session (to resume it, from any process):
        its state is read now, and ``ask`` hands out its pending batch.
        Raises NotFound when there is none with that id."""
        if not isinstance(session_id, str) or not session_id or "/" in session_id:
            raise ValueError(f"session id {session_id!r}: want the id string of a session")
        return Session(self, self._t.request("GET", "/v1/sessions/" + session_id))

    def sessions(self, limit=None):
        """Summaries of the sessions, oldest first (all of them, or the
        first ``limit``): dicts with id, name, algorithm, dimension,
        population_size, status, generation, evaluations, best_f,
        created_at, updated_at."""
        out, after = [], None
        while limit is None or len(out) < limit:
            page = 1000 if limit is None else min(1000, limit - len(out))
            ans = self._t.request("GET", "/v1/sessions", query={"limit": page, "after": after})
            out.extend(ans["sessions"])
            after = ans.get("next")
            if not after or not ans["sessions"]:
                break
        return out

    def work(self, f, session_id, *, lease=None, poll=1.0, max_evaluations=None, worker=None):
        """Runs one worker of session ``session_id`` until it stops: claims
        a point (``Session.claim``), evaluates f on it in this thread and
        tells the value, again and again. Start as many workers as you
        like, anywhere (one per node of a cluster, say): each point is
        evaluated by one of them, and a worker that dies leaves its point
        to another once its lease runs out.

        An evaluation that raises, or returns None, NaN or something that
        is not a number, is told as a failed evaluation (None) with a
        warning. When no point is free the worker sleeps ``poll`` seconds.
        ``worker`` names it to the server (default: a random id), which
        makes its claims safe to send again. While f runs, the worker renews
        its lease every half lease (``lease`` seconds, None = the server's
        default of an hour), so an evaluation may take longer than the
        lease: the point goes to another worker only when this one has
        stopped renewing. Returns the number of evaluations it made (at
        most ``max_evaluations``, None = no limit).
        """
        if not callable(f):
            raise TypeError(f"f is {type(f).__name__}, want a callable")
        worker = worker or "worker-" + uuid.uuid4().hex
        es = self.session(session_id)
        call, done = _Call(f), 0
        while max_evaluations is None or done < max_evaluations:
            try:
                c = es.claim(lease, worker)
                if c is None:
                    time.sleep(poll)
                    continue
                v, why = _told_value(*_renewing(es, c, lease, worker, lambda: call(c.x)), "f(x)")
                done += 1
                if why is not None:
                    log.warning("selfcma: generation %d: the evaluation of candidate %d failed: %s; told as None",
                                c.generation, c.index, why)
                es.tell_claim(c, v)
            except Stopped:
                break
            except Conflict as e:
                log.warning("selfcma: session %s: %s; claiming again", es.id, e.message)
        return done

    def delete(self, session_id):
        """Deletes a session and its history."""
        self._t.request("DELETE", "/v1/sessions/" + session_id)

    def backup(self, path):
        """GET /v1/backup: saves a consistent copy of the server's whole
        database, taken while it runs, to ``path`` (written to
        ``path + ".part"``, synced, then renamed) and returns its size in
        bytes. To restore, start a server with ``-db`` naming the copy:
        every session goes on from the generation the copy holds."""
        data = self._t.request("GET", "/v1/backup", raw=True)
        part = os.fspath(path) + ".part"
        with open(part, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        return len(data)

    def optimize(
        self,
        f: Callable[[List[float]], Optional[float]],
        x0=None,
        sigma0=None,
        *,
        workers=4,
        session_id=None,
        executor=None,
        save_interval=10.0,
        verbose=False,
        callback=None,
        **options,
    ):
        """Minimizes f until the session stops; returns the Session.

        Each generation's λ points are evaluated in parallel, f(x) with x a
        list of floats. An evaluation that raises an exception, or returns
        None, NaN or something that is not a number, is told as a failed
        evaluation (None: it ranks worst) and logged as a warning on the
        ``selfcma`` logger; +inf is told as None too.

        Args:
            f: the objective; picklable (a module-level function) for
                processes.
            x0, sigma0, **options: a new session, as for ``create``
                (population_size, algorithm, seed, bounds, restarts,
                termination, name, metadata, hyperparameters).
            session_id: resume this session instead (x0, sigma0 and the
                options are then ignored): the points of the pending batch
                whose values the server does not hold are evaluated again,
                and the run continues as if it had never been interrupted.
            workers: how many evaluations run at once; 1 evaluates in this
                thread.
            executor: None or ``"threads"`` (a thread pool of ``workers``),
                ``"processes"`` (a process pool of ``workers``, for
                objectives that hold the GIL), or your own
                ``concurrent.futures.Executor`` (left open).
            save_interval: seconds. Once a generation's evaluations have run
                this long, the values that finish are told to the server as
                they come (``tell_partial``, at most one request per
                save_interval), so a crash loses no finished evaluation: a
                resumed run evaluates only the points still without a
                value. A generation that ends sooner is told in one
                request. 0 tells every value as it finishes; None only
                whole generations.
            verbose: print a line per generation (generation, evaluations,
                best f, σ, c1, cmu, cc); an int k prints every k-th.
            callback: called as callback(session) after every generation;
                returning True ends the loop (the session stays running).

        Several processes may run optimize on the same session: a
        generation another one told first is skipped (a warning), and the
        loop ends when the session stops.

        On KeyboardInterrupt (Ctrl-C) the session stays intact on the server:
        the message printed to stderr names it and the call that resumes it,
        ``client.optimize(f, session_id=...)``; then the KeyboardInterrupt is
        raised again.
        """
        if not callable(f):
            raise TypeError(f"f is {type(f).__name__}, want a callable")
        if not (executor in (None, "threads", "processes") or hasattr(executor, "submit")):
            raise ValueError(f"executor {executor!r}: want None, 'threads', 'processes' or an Executor")
        if session_id is not None:
            es = self.session(session_id)
        else:
            if x0 is None or sigma0 is None:
                raise TypeError("optimize needs x0 and sigma0, or the session_id of a session to resume")
            es = self.create(x0, sigma0, **options)

        every = int(verbose) if verbose else 0
        own = pool = None
        if executor == "processes":
            own = pool = concurrent.futures.ProcessPoolExecutor(workers)
        elif executor not in (None, "threads"):
            pool = executor
        elif workers > 1:
            own = pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="selfcma-eval")

        call = _Call(f)
        try:
            if every:
                resumed = "resumed" if session_id is not None else "created"
                print(
                    f"selfcma: session {es.id} {resumed} ({es.algorithm}, n={es.dimension}, "
                    f"λ={es.population_size}, seed={es.seed}, generation {es.generation})",
                    flush=True,
                )
                print(Session.PROGRESS_HEADER, flush=True)
            while not es.stop():
                try:
                    X = es.ask()
                    held = es._held()
                    teller = _Teller(es, X, held, save_interval)
                    todo = [i for i in range(len(X)) if i not in held]
                    _evaluate(call, X, todo, pool, es.generation, teller.add)
                    teller.finish()
                except Stopped:
                    es._refresh_quietly()  # stopped by another client
                    break
                except Conflict as e:
                    # Another client told this generation (or some of its
                    # points) first: go on from the server's state.
                    log.warning("selfcma: session %s: %s; asking again", es.id, e.message)
                    es._refresh_quietly()
                    continue
                if every and (es.generation % every == 0 or es.stop()):
                    es.disp()
                if callback is not None and callback(es):
                    break
        except KeyboardInterrupt:
            if own is not None:
                own.shutdown(wait=False, cancel_futures=True)
                own = None
            print(
                f"\nselfcma: interrupted. Session {es.id} is intact on the server "
                f"(last seen at generation {es.generation}, {es.evaluations} evaluations).\n"
                f"Resume it with:\n    client.optimize(f, session_id={es.id!r})\n"
                f"with client = selfcma.Client({self.url!r}), or attach with client.session({es.id!r}).",
                file=sys.stderr,
                flush=True,
            )
            raise
        finally:
            if own is not None:
                own.shutdown(wait=True)
        if every and es.stop():
            reasons = ", ".join(f"{k}={v}" for k, v in es.stop().items())
            print(f"selfcma: session {es.id} stopped: {reasons}", flush=True)
        return es


def _evaluate(call, X, todo, pool, generation, sink):
    """Evaluates X[i] for each i in todo and calls sink(i, value) as each
    value is known (in the order the evaluations finish, with a pool): a
    float, or None for a failed evaluation."""
    failures = []

    def outcome(i, ok, v):
        v, why = _told_value(ok, v, f"f(X[{i}])")
        if why is not None:
            failures.append((i, why))
        sink(i, v)

    if pool is None:
        for i in todo:
            outcome(i, *call(X[i]))
    else:
        futures = {pool.submit(call, X[i]): i for i in todo}
        try:
            for fut in concurrent.futures.as_completed(futures):
                outcome(futures[fut], *fut.result())
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
    if failures:
        i, why = min(failures, key=lambda f: f[0])
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        log.warning(
            "selfcma: generation %d: the evaluation of candidate %d failed: %s%s; told as None",
            generation,
            i,
            why,
            more,
        )


def _told_value(ok, v, name):
    """(value, why): what to tell for the outcome (ok, v) of a _Call, and
    why the evaluation failed (None if it did not)."""
    if not ok:
        return None, v
    try:
        v = conv.fitness_value(v, name)
    except (TypeError, ValueError) as e:
        return None, str(e)
    return v, ("returned None, NaN or +inf" if v is None else None)


def _renewing(es, claim, lease, worker, evaluate):
    """evaluate(), while a thread renews the worker's lease of the claimed
    point every half lease (and takes it again if the lease ran out
    meanwhile); the renewals stop with the evaluation."""
    done = threading.Event()

    def renew():
        while not done.wait((lease or 3600) / 2):
            try:
                es.renew(claim, lease, worker)
            except Exception:  # the tell that follows will say what is wrong
                return

    t = threading.Thread(target=renew, name="selfcma-lease", daemon=True)
    t.start()
    try:
        return evaluate()
    finally:
        done.set()
        t.join()


class _Teller:
    """Tells the values of one generation as optimize gets them: in parts
    (Session.tell_partial) once save_interval seconds have passed since the
    generation's evaluations started or since the last part, so that the
    server holds what a long generation has finished; all at once (one
    tell) when the generation ends sooner."""

    def __init__(self, es, X, held, save_interval):
        self.es, self.X, self.interval = es, X, save_interval
        self.values = [None] * len(X)
        self.parted = bool(held)  # some values of the generation are on the server
        self.points, self.part = [], []  # not yet told
        self.last = time.monotonic()

    def add(self, i, v):
        self.values[i] = v
        self.points.append(self.X[i])
        self.part.append(v)
        if self.interval is not None and time.monotonic() - self.last >= self.interval:
            self.send()

    def send(self):
        if self.points:
            self.es.tell_partial(self.points, self.part)
            self.parted = True
            self.points, self.part = [], []
        self.last = time.monotonic()

    def finish(self):
        if self.parted:
            self.send()
        else:
            self.es.tell(self.X, self.values)
