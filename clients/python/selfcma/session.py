"""Session: one optimization on the server, driven like pycma's
CMAEvolutionStrategy (ask, tell, stop, result, disp)."""

from __future__ import annotations

import copy
import math
import sys

from . import _convert as conv
from .errors import Stopped
from .options import bounds as pycma_bounds
from .options import to_create
from .result import Claim, Result, StopDict

__all__ = ["Session"]

# The metadata key under which a session created with pycma's options keeps
# them, so that a session attached from another process has them too.
OPTIONS_KEY = "pycma_options"


def _stop_dict(reasons):
    return StopDict((r.get("name"), r.get("value")) for r in reasons or [])


def _transform1(x, lo, up):
    """pycma's box transformation of one coordinate (the server's, in
    internal/cmaes/bounds.go): identity well inside [lo, up], quadratic in
    a margin at each bound, mirrored beyond."""
    al = min((up - lo) / 2, (1 + abs(lo)) / 20)
    au = min((up - lo) / 2, (1 + abs(up)) / 20)
    if x < lo - 2 * al - (up - lo) / 2 or x > up + 2 * au + (up - lo) / 2:
        r = 2 * (up - lo + al + au)
        s = lo - 2 * al - (up - lo) / 2
        x -= r * math.floor((x - s) / r)
    if x > up + au:
        x -= 2 * (x - up - au)
    if x < lo - al:
        x += 2 * (lo - al - x)
    if x < lo + al:
        x = lo + (x - (lo - al)) * (x - (lo - al)) / (4 * al)
    elif x > up - au:
        x = up - (x - (up + au)) * (x - (up + au)) / (4 * au)
    return min(max(x, lo), up)


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

    def __init__(self, client, state, *, numpy=False, bounds=None):
        self._client = client
        self._state = state
        self._batch = None  # (generation, candidates) of the last ask
        self._told = None  # (generation, candidates) of the last tell
        self._next = None  # (generation, candidates) the last tell answered with
        self._np = conv.numpy_module() if numpy else None
        meta = state.get("metadata") or {}
        opts = meta.get(OPTIONS_KEY) if isinstance(meta, dict) else None
        self._opts = dict(opts) if isinstance(opts, dict) else {}
        self._local = {}
        if self._opts:
            try:
                _, self._local = to_create(self._opts, state.get("dimension") or 1)
            except (TypeError, ValueError):
                self._local = {}
            if bounds is None and "bounds" in self._opts and state.get("dimension"):
                try:
                    bounds = pycma_bounds(self._opts["bounds"], state["dimension"])
                except (TypeError, ValueError):
                    bounds = None
        self._bounds = bounds  # {"lower": [...], "upper": [...]} when known
        self._evals_best = (None, None)  # (best generation, its evaluations)
        self._disp_lines = 0

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
        ``max_evaluations``, ...), which also answers pycma's names
        (``'ftarget' in es.stop()``). Truthy exactly when stopped, so
        ``while not es.stop():`` drives the loop.

        pycma's ``maxiter`` option is checked here, by the client: once
        ``iterations`` reaches it, stop() gives ``{'maxiter': maxiter}``
        (the server's session runs on until ``end()``; ``fmin2`` and
        ``optimize`` end it)."""
        out = StopDict()
        if self._state.get("status") == "stopped":
            out = _stop_dict(self._state.get("stop_reasons"))
        m = self._local.get("maxiter")
        if m is not None and (self._state.get("generation") or 0) >= m:
            out["maxiter"] = m
        return out

    def _stopped_locally(self):
        """Whether only a criterion the client checks (maxiter) stops it."""
        return self._state.get("status") != "stopped" and bool(self.stop())

    def _out(self, x):
        """A point as the caller wants it: a numpy array when it used numpy."""
        if x is None:
            return None
        return self._np.array(x, dtype=float) if self._np is not None else list(x)

    def ask(self):
        """The λ candidate points of the pending generation, as a list of
        lists of floats (of numpy arrays when x0 was a numpy array). Asking
        again before telling returns the same points (also after a restart
        of the server, and from another process).

        The first ask after a tell costs no request: the tell's answer
        carried the batch (``tell?next=true``).

        Raises Stopped when the session has stopped.
        """
        if self._next is not None and self._next[0] == self._state.get("generation"):
            g, cands = self._next
            self._next = None
            self._batch = (g, cands)
            return [self._out(x) for x in cands]
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
        return [self._out(x) for x in cands]

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
        this worker again, unless another worker has claimed it. Needs the
        worker's id (as given to ``claim``). Raises
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
        """A Result, pycma's result tuple (xbest, fbest, evals_best,
        evaluations, iterations, xfavorite, stds, stop) followed by the
        service's fields (best_generation, generation, mean, sigma, status,
        session_id). evals_best costs one request the first time a new best
        generation is seen (it is read from the history)."""
        s = self._state
        best = s.get("best") or {}
        mean = list(s.get("mean") or [])
        stds = s.get("stds")
        return Result(
            xbest=self._out(best.get("x")),
            fbest=best.get("f"),
            evals_best=self._best_evaluations(best.get("generation")),
            evaluations=s.get("evaluations", 0),
            iterations=s.get("generation", 0),
            xfavorite=self._out(self._into_bounds(mean)),
            stds=self._out(stds) if stds is not None else None,
            stop=self.stop(),
            best_generation=best.get("generation"),
            generation=s.get("generation", 0),
            mean=self._out(mean),
            sigma=s.get("sigma"),
            status=s.get("status", ""),
            session_id=s.get("id", ""),
        )

    def _into_bounds(self, x):
        """x mapped into the session's bounds as its candidates are (when
        this object knows the bounds), else x."""
        b = self._bounds
        if not b or any(v is None for v in x):
            return list(x)
        return [_transform1(v, lo, up) for v, lo, up in zip(x, b["lower"], b["upper"])]

    def _best_evaluations(self, g):
        """The evaluations told up to the end of generation g (pycma's
        evals_best: its count when xbest was evaluated), read once per g from
        the history; None when unknown."""
        if g is None or self._client is None:
            return None
        if self._evals_best[0] != g:
            try:
                rec = self.history(start=g, limit=1)
                v = rec[0].get("evaluations") if rec and rec[0].get("generation") == g else None
            except Exception:  # the result stays usable without it
                return None
            self._evals_best = (g, v)
        return self._evals_best[1]

    # pycma's CMAEvolutionStrategy names.

    countiter = property(lambda self: self._state.get("generation", 0), doc="Iterations (generations) told.")
    countevals = property(lambda self: self._state.get("evaluations", 0), doc="Evaluations told.")
    N = property(lambda self: self._state.get("dimension"), doc="The dimension n.")

    @property
    def opts(self):
        """The pycma options the session was created with (a copy; {} when
        it was created with the service's keywords only)."""
        return copy.deepcopy(self._opts)

    def result_pretty(self, file=None):
        """Prints the result as pycma's result_pretty does (termination
        criteria, final and best f, the incumbent solution and its standard
        deviations) and returns ``result``."""
        out = file or sys.stdout
        r = self.result
        for k, v in r.stop.items():
            print(f"termination on {k}={v}", file=out)
        last = None
        if r.iterations and self._client is not None:
            try:
                rec = self.history(start=r.iterations - 1, limit=1)
                last = rec[0].get("best") if rec else None
            except Exception:
                last = None
        print(
            "final/bestever f-value = %s %s after %d/%s evaluations"
            % (_fmt(last, "e"), _fmt(r.fbest, "e"), r.evaluations, "-" if r.evals_best is None else r.evals_best),
            file=out,
        )

        def show(v):
            v = [float(x) for x in list(v)]
            return "[" + ", ".join(f"{x:.8g}" for x in v[:8]) + (", ...]" if len(v) > 8 else "]")

        print("incumbent solution: " + show(r.xfavorite), file=out)
        if r.stds is not None:
            print("std deviations: " + show(r.stds), file=out)
        out.flush()
        return r

    def inject(self, points, clip=True, *, force=None):
        """Injects external points (pycma's ``inject``; Hansen 2011,
        arXiv:1110.4181): they become candidates 0, 1, ... of the next
        batches sampled (the next batch after the pending generation is
        told), as many as λ allows per batch; at most λ may wait at once.
        The point handed out and evaluated is the point itself, as with
        pycma's ``inject(..., force=True)``; ``force`` is accepted for
        pycma's signature and changes nothing. With ``clip`` (the default,
        as pycma's tell does) the step of each injected point is clipped in
        the update. None entries are skipped, as pycma does. Returns the
        generation whose batch takes the first point. Raises OutOfRange for
        points of the wrong dimension, outside the bounds or too many,
        Stopped when the session has stopped. An injection sent twice queues
        its points twice, so a request that may have reached the server is
        not retried (ServerUnavailable: see ``info["injected"]`` after a
        ``refresh()``)."""
        points = [p for p in conv.plain(points) if p is not None]
        if not points:
            raise ValueError("points is empty: inject at least one point")
        P = conv.matrix(points, "points")
        for i, x in enumerate(P):
            if len(x) != self.dimension:
                raise ValueError(f"points[{i}] has {len(x)} values, want {self.dimension}")
        try:
            ans = self._client._t.request("POST", self._path + "/inject", {"points": P, "clip": bool(clip)},
                                          idempotent=False)
        except Stopped:
            self._refresh_quietly()
            raise
        return ans["generation"]

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

    def disp(self, modulo=None, file=None, header=False):
        """Prints a progress line as pycma's disp does: with the header
        every 10·modulo iterations, a line for the first three iterations,
        every ``modulo``-th (default: the ``verb_disp`` option, else 100, as
        pycma) and once the session has stopped. ``header=True`` prints the
        header and the line now, whatever the iteration."""
        out = file or sys.stdout
        if header:
            print(self.PROGRESS_HEADER, file=out)
            print(self.progress_line(), file=out, flush=True)
            return
        if modulo is None:
            modulo = self._local.get("verb_disp", 100)
        if not modulo:
            return
        it = self._state.get("generation") or 0
        if it < 4 or it % modulo < 1 or self.stop():
            if self._disp_lines == 0 or (it - 1) % (10 * modulo) < 1:
                print(self.PROGRESS_HEADER, file=out)
            print(self.progress_line(), file=out, flush=True)
            self._disp_lines += 1


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


