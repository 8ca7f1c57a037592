"""Session: one optimization on the server, driven like pycma's
CMAEvolutionStrategy (ask, tell, stop, result, disp)."""

from __future__ import annotations

import copy
import math
import statistics
import sys
import time
import uuid
import warnings
import webbrowser

from . import _convert as conv
from . import mixed
from .errors import NotFound, OutOfRange, Stopped, Unsupported
from .options import to_create
from .result import BestFeasible, BestSolution, Claim, Result, StopDict

__all__ = ["Session"]

# The metadata key under which a session created with pycma's options keeps
# them, so that a session attached from another process has them too.
OPTIONS_KEY = "pycma_options"

# The metadata key that marks a session created with numpy (x0 an array):
# attached by id, it gives numpy arrays too.
NUMPY_KEY = "python_numpy"


def _attach(client, session_id, numpy):
    """A pickled Session, attached again."""
    return client.session(session_id, numpy=numpy)


def _stop_dict(reasons):
    return StopDict((r.get("name"), r.get("value")) for r in reasons or [])


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


def _positions_in(X, held):
    """The indices of the points X in held ({index: point}), each at most
    once, or None when one is not there."""
    where = {}
    for j, c in sorted(held.items()):
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

    pycma's attributes and methods a script uses are here with pycma's
    meaning where the service has the same thing (``ask(number)``,
    ``ask_and_eval``, ``optimize``, ``best``, ``mean``, ``sigma``,
    ``stds``, ``C`` up to 200 coordinates, ``logger``, ``disp``,
    ``result_pretty``, ``inject``); what it does not have (``C`` of a
    larger session, setting ``sigma``) raises Unsupported saying what to do
    instead. A Session pickles (and copies) as its id and its
    client's URLs: unpickled, it attaches to the session again, as it is on
    the server then.
    """

    def __init__(self, client, state, *, numpy=None, route=None):
        self._client = client
        self._state = state
        self._batch = None  # (generation, candidates) of the last ask
        self._told = None  # (generation, candidates) of the last tell
        self._next = None  # (generation, candidates) the last tell answered with
        meta = state.get("metadata") or {}
        if not isinstance(meta, dict):
            meta = {}
        if numpy is None:
            # As the session was created: with numpy when x0 was an array.
            numpy = meta.get(NUMPY_KEY) is True
        self._np = conv.numpy_module() if numpy else None
        opts = meta.get(OPTIONS_KEY)
        self._opts = dict(opts) if isinstance(opts, dict) else {}
        self._local = {}
        if self._opts:
            try:
                _, self._local = to_create(self._opts, state.get("dimension") or 1)
            except (TypeError, ValueError):
                self._local = {}
        self._evals_best = (None, None)  # (best generation, its evaluations)
        self._disp_lines = 0
        # The server this session's requests go to (several servers).
        if route is None and client is not None and hasattr(client._t, "route"):
            route = client._t.route()
        self._route = route
        # ask(number): the points this object claimed and has not told yet,
        # {index: point} of generation _claims_gen, and the claims made.
        self._claims, self._claims_gen, self._claimed = {}, None, 0
        self._ask_id = None
        self._overall = (None, None)  # (generation, σ·√λ_max(C))
        self._logger = None
        self._space = mixed.space_of(state)  # (n_x, n_z, n_c) of a mixed session (mixed.py)

    def _req(self, method, suffix, body=None, **kw):
        """A request about this session (``suffix`` after its path), sent
        to the server the session uses."""
        if self._route is not None:
            kw["route"] = self._route
        return self._client._t.request(method, self._path + suffix, body, **kw)

    def __reduce__(self):
        # Pickled as the session's id and the client's URLs: unpickling
        # attaches to the session again (reads its state from the server).
        if self._client is None:
            raise TypeError("a Session without a client does not pickle")
        return (_attach, (self._client, self.id, self._np is not None))

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

    def _point(self, v):
        """A point of the batch as ask hands it out: _out's, a MixedPoint of
        a mixed session's flat point."""
        if self._space is None or v is None:
            return self._out(v)
        return mixed.split(v, self._space, self._out)

    def _points_in(self, X):
        """X as flat points: a mixed session's MixedPoints as x + z + c."""
        if self._space is None:
            return X
        return [mixed.flat(p, f"X[{i}]") for i, p in enumerate(conv.plain(X))]

    def ask(self, number=None, xmean=None, sigma_fac=1, gradf=None, args=(), *, lease=None, **kwargs):
        """The λ candidate points of the pending generation, as a list of
        lists of floats (of numpy arrays when x0 was a numpy array). Asking
        again before telling returns the same points (also after a restart
        of the server, and from another process).

        The first ask after a tell costs no request: the tell's answer
        carried the batch (``tell?next=true``).

        number: as pycma's ``es.ask(number)``, that many points; here they
            are points of the pending batch claimed under a lease (``claim``,
            for ``lease`` seconds; None: the server's minute, so give a
            lease longer than the evaluations take), so that no other
            ask(number), worker or trial evaluates them meanwhile. Fewer
            come when fewer are left without a value and a lease; tell them
            with ``tell(X, values)`` as they are (the generation advances
            once every point of the batch has a value). When every point
            left is leased to others, ask waits for one; when this object
            holds them all, it raises ValueError (tell those first).

        pycma's xmean, sigma_fac and gradf (a batch sampled elsewhere) have
        no counterpart: the server samples the batch (Unsupported); its
        other keywords (ignore_integer_variables) are ignored.

        Raises Stopped when the session has stopped.
        """
        if xmean is not None or gradf is not None or sigma_fac != 1:
            raise Unsupported(
                "ask(xmean=, sigma_fac=, gradf=): the server samples every batch itself from its own state, so a "
                "batch around another mean or with another width cannot be asked for; inject(points) makes "
                "points of your own candidates of the next batch"
            )
        if number is not None:
            return self._ask_claims(conv.integer(number, "number"), lease)
        if self._next is not None and self._next[0] == self._state.get("generation"):
            g, cands = self._next
            self._next = None
            self._batch = (g, cands)
            return [self._point(x) for x in cands]
        self._next = None
        try:
            b = self._req("GET", "/ask")
        except Stopped:
            self._refresh_quietly()
            raise
        g, cands = b["generation"], mixed.flat_batch(b)
        self._batch = (g, cands)
        if g != self._state.get("generation"):
            self._refresh_quietly()  # another client advanced it
        return [self._point(x) for x in cands]

    def _ask_claims(self, number, lease):
        """ask(number): up to number points of the pending batch, claimed."""
        if number < 1:
            raise ValueError(f"number is {number}: want at least 1 (or None for the whole batch)")
        if self._ask_id is None:
            self._ask_id = "ask-" + uuid.uuid4().hex[:24]
        got, wait = [], 0.05
        while True:
            while len(got) < number:
                # One worker id per claim: a claim sent again after a lost
                # answer gets its lease again rather than another point.
                self._claimed += 1
                c = self._claim(lease, f"{self._ask_id}-{self._claimed}", None)
                if c is None:
                    break
                if c.generation != self._claims_gen:
                    self._claims, self._claims_gen = {}, c.generation
                v = list(c.x) + list(c.z or []) + [float(k) for k in c.c or []]
                self._claims[c.index] = v
                got.append(v)
            if got:
                return [self._point(x) for x in got]
            if self._claims and self._claims_gen == self._state.get("generation"):
                raise ValueError(
                    f"ask({number}): every point of generation {self._claims_gen} without a value is leased, "
                    f"{len(self._claims)} of them to this Session's earlier asks: tell their values first"
                )
            time.sleep(wait)  # leased to other workers: one comes free, or the generation ends
            wait = min(2 * wait, 1.0)
            self._refresh_quietly()

    def tell(self, X, fitness, check_points=None, copy=False, constraints_values=None):
        """Tells the fitness values of the points X of the pending generation
        and advances the session one generation.

        X: the points ``ask`` returned (lists, or an array with ``tolist()``),
            in any order; fitness[i] is the value of X[i].
        fitness: λ numbers; None for a failed evaluation (it ranks worst).
            NaN and +inf are told as None; -inf is refused (ValueError).

        Points that ``ask(number)`` claimed are told as a part of their
        generation (the server holds the values; the tell that brings the
        last value of the batch advances the session).

        Raises ValueError when X is not the pending batch (the points must be
        told unmodified), Conflict when another client told this generation
        first, Stopped when the session has stopped. A tell retried after a
        lost answer applies once: telling the same X and values again is
        answered as the first time. check_points and copy are pycma's and
        change nothing here.

        constraints_values: pycma's, for a session created with
            ``constraints=m``: G[i] holds the m values g_j(X[i]), feasible
            when all are ≤ 0 (a list of rows or a 2-D array; None or NaN
            for an unknown value, a None row when all are unknown: the
            point then ranks as a failed evaluation). Required by a
            constrained session, refused (OutOfRange) by any other.
        """
        X = conv.matrix(self._points_in(X), "X")
        values = conv.fitness(fitness, len(X))
        G = None if constraints_values is None else conv.constraint_values(constraints_values, len(X))
        if self._claims and X:
            idx = _positions_in(X, self._claims)
            if idx is not None:
                self._tell_claims(idx, values, G)
                return
        gen, cands, perm = self._find(X, _permutation, "is not")
        ordered = [None] * len(values)
        for i, j in enumerate(perm):
            ordered[j] = values[i]
        body = {"generation": gen, "fitness": ordered}
        if G is not None:
            body["constraint_values"] = [None] * len(G)
            for i, j in enumerate(perm):
                body["constraint_values"][j] = G[i]
        self._send_tell(gen, cands, body)

    def _tell_claims(self, indices, values, G=None):
        """Tells the values of points claimed by ask(number)."""
        gen = self._claims_gen
        body = {"generation": gen, "indices": indices, "fitness": values}
        if G is not None:
            body["constraint_values"] = G
        try:
            self._state = self._req("POST", "/tell", body)
        except Stopped:
            self._claims = {}
            self._refresh_quietly()
            raise
        for i in indices:
            self._claims.pop(i, None)
        if self._state.get("generation") != gen:
            self._claims, self._batch, self._next = {}, None, None
            return True
        return False

    def ask_and_eval(self, func, args=(), gradf=None, number=None, xmean=None, sigma_fac=1, evaluations=1,
                     aggregation=None, kappa=1, parallel_mode=False):
        """pycma's ``ask_and_eval``: asks (``ask(number)``) and evaluates
        each point, ``func(x, *args)``, returning ``(X, fit)`` for ``tell``::

            while not es.stop():
                es.tell(*es.ask_and_eval(f))

        ``evaluations`` > 1 evaluates each point that many times and takes
        ``aggregation`` of the values (default: the median, as pycma);
        ``parallel_mode`` calls ``func(X, *args)`` once for the list of
        points. pycma samples a point again while its value is None or NaN;
        here the server fixes the batch, so such a value is told as a failed
        evaluation (it ranks worst). gradf, xmean, sigma_fac and kappa ≠ 1
        have no counterpart (Unsupported)."""
        if kappa != 1:
            raise Unsupported("ask_and_eval(kappa=): the service evaluates the points it hands out, not rescaled ones")
        X = self.ask(number, xmean=xmean, sigma_fac=sigma_fac, gradf=gradf)
        agg = aggregation if aggregation is not None else statistics.median
        n = conv.integer(evaluations, "evaluations")
        if n < 1:
            raise ValueError(f"evaluations is {n}: want at least 1")

        def aggregate(vs):
            if n == 1:
                return vs[0]
            if any(v is None or v != v for v in vs):  # a failed evaluation fails the point
                return None
            return float(agg(vs))

        if parallel_mode:
            runs = []
            for _ in range(n):
                fit = list(func(X, *args))
                if len(fit) != len(X):
                    raise ValueError(f"func returned {len(fit)} values for {len(X)} points")
                runs.append(fit)
            return X, [aggregate([r[i] for r in runs]) for i in range(len(X))]
        return X, [aggregate([func(x, *args) for _ in range(n)]) for x in X]

    def optimize(self, objective_fct, maxfun=None, iterations=None, min_iterations=1, args=(), verb_disp=None,
                 callback=None, n_jobs=0, **kwargs):
        """pycma's ``es.optimize``: minimizes objective_fct (called as
        ``objective_fct(x, *args)``) until ``stop()``, or for ``iterations``
        more iterations, or ``maxfun`` more evaluations; returns self.

        callback: a callable or a list, each called as callback(es) after
            every iteration (``es.logger.add`` is among them, as in pycma).
        verb_disp: ``disp`` every verb_disp iterations (None: the option
            verb_disp, default 100; 0: nothing); when it is on, the
            termination, best value and solution are printed at the end.
        n_jobs: as pycma: 0 or 1 evaluates in this thread; k > 1 in k
            processes, None or -1 in one process per CPU (objective_fct
            must pickle).

        An evaluation that raises, or returns None or NaN, is told as a
        failed evaluation; once every evaluation of 3 iterations in a row
        failed it raises the objective's exception (``Client.optimize``
        says more). min_iterations is pycma's and changes nothing here (a
        stopped session cannot go on).
        """
        from . import runner

        if kwargs:
            warnings.warn(f"optimize ignores the argument{'s' if len(kwargs) > 1 else ''} {sorted(kwargs)}",
                          stacklevel=2)
        if callback is None:
            callbacks = []
        elif callable(callback):
            callbacks = [callback]
        else:
            callbacks = list(callback)
            for c in callbacks:
                if not callable(c):
                    raise ValueError(f"callback {c!r} is not callable")
        callbacks.append(self.logger.add)
        if n_jobs in (None, -1):
            import os

            n_jobs = os.cpu_count() or 1
        n_jobs = conv.integer(n_jobs, "n_jobs")
        executor = "processes" if n_jobs > 1 else None
        it0, ev0 = self.countiter, self.countevals
        ended = []

        def after(es):
            for c in callbacks:
                c(es)
            es.disp(verb_disp)
            if (maxfun and es.countevals - ev0 >= maxfun) or (iterations and es.countiter - it0 >= iterations):
                ended.append(True)
                return True
            return False

        runner.optimize(self._client, objective_fct, self, resumed=False, workers=max(1, n_jobs), executor=executor,
                        save_interval=10.0, verbose=False, callback=after, args=args)
        if verb_disp is None:
            verb_disp = self._local.get("verb_disp", 100)
        if verb_disp and not ended:
            self.disp(1)
            print("termination by", dict(self.stop()))
            print("best f-value =", self.result[1])
            print("solution =", self.result[0])
        return self

    def tell_partial(self, X, fitness, constraints_values=None):
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
        constraints_values: as ``tell``'s, the rows of X's points.
        """
        X = conv.matrix(self._points_in(X), "X")
        values = conv.fitness(fitness, len(X))
        if not X:
            raise ValueError("X is empty: tell at least one point")
        gen, cands, indices = self._find(X, _positions, "holds points that are not in")
        # The next batch comes with the answer only when this part should
        # complete the generation, as far as this object knows.
        held = self._held() if self._state.get("generation") == gen else set()
        last = len(held | set(indices)) == len(cands)
        body = {"generation": gen, "indices": indices, "fitness": values}
        if constraints_values is not None:
            body["constraint_values"] = conv.constraint_values(constraints_values, len(X))
        return self._send_tell(gen, cands, body, last)

    def _send_tell(self, gen, cands, body, next_batch=True):
        """Sends the tell body of generation gen, whose batch is cands (with
        next=true unless next_batch is False), and takes the answer; True
        when the generation was applied."""
        self._next = None
        try:
            q = {"next": "true"} if next_batch else None
            state = self._req("POST", "/tell", body, query=q)
        except Stopped:
            self._refresh_quietly()
            raise
        nxt = state.pop("next", None)
        self._state = state
        done = state.get("generation") != gen
        if done:
            self._told = (gen, [list(c) for c in cands])
            self._batch = None
            self._claims = {}
        if nxt is not None:
            self._next = (nxt["generation"], mixed.flat_batch(nxt))
        return done

    def claim(self, lease=None, worker=None):
        """Leases one point of the pending generation to this worker: one
        that has no value and that no other worker holds, for ``lease``
        seconds (None: the server's default, a minute). Returns a Claim, or
        None when every point without a value is leased (try again later:
        a point whose lease runs out is handed out again, and when the
        generation completes the next one's points are free). Tell the
        value with ``tell_claim``; a worker that will not tell it (it
        stops) gives the point back with ``release``. A worker evaluating
        longer than the lease renews it (``renew``) every half lease.
        Raises Stopped when the session has stopped.

        worker: an id of this worker (visible ASCII, at most 128
            characters). While its lease runs and its point has no value,
            its claims answer that lease again, renewed for ``lease``
            seconds from now: a worker keeps its point while it evaluates
            by claiming again. Without an id, the claim carries an
            Idempotency-Key of its own, so that a claim sent again after a
            lost answer leases nothing more; every call leases another
            point."""
        return self._claim(lease, worker, None)

    def renew(self, claim, lease=None, worker=None):
        """Renews this worker's lease of the claimed point (for ``lease``
        seconds from now, if that is later) and returns the Claim with its
        new end. If the lease has run out meanwhile, it leases the point to
        this worker again, unless another worker has claimed it. Needs the
        worker's id (as given to ``claim``; None: the claim's own). Raises
        Conflict when the point's generation has passed, the point has a
        value, or another worker holds it."""
        worker = worker if worker is not None else claim.worker
        if worker is None:
            raise ValueError("renew needs the worker id given to claim")
        return self._claim(lease, worker, claim)

    def release(self, claim, worker=None):
        """Gives the claimed point back: this worker's lease of it ends, and
        the next claim hands it out again (for a worker that stops without
        its value). Returns whether a lease was released (False when it had
        run out, was released already, or its generation was told)."""
        worker = worker if worker is not None else claim.worker
        if worker is None:
            raise ValueError("release needs the worker id given to claim")
        q = {"generation": claim.generation, "index": claim.index, "worker": str(worker)}
        return bool(self._req("POST", "/release", query=q)["released"])

    def _claim(self, lease, worker, claim):
        q, headers = {}, None
        if lease is not None:
            q["lease"] = conv.integer(lease, "lease")
        if worker is not None:
            q["worker"] = str(worker)
        else:
            # The key names the lease: the same claim sent again answers it.
            worker = "claim-" + uuid.uuid4().hex
            headers = {"Idempotency-Key": worker}
        if claim is not None:
            q["generation"], q["index"] = claim.generation, claim.index
        try:
            c = self._req("POST", "/claim", query=q, headers=headers)
        except Stopped:
            self._refresh_quietly()
            raise
        return _claim_of(c, worker)

    def tell_claim(self, claim, value, constraints_values=None):
        """Tells the value of a claimed point (None for a failed evaluation);
        returns True when it completed the generation. Raises Conflict when
        the point's generation has passed with another value (or another
        worker told the point another value first), Stopped when the
        session has stopped. constraints_values: a constrained session's
        m values g_j of the point (None or NaN where unknown)."""
        gen = claim.generation
        self._state = self._tell_claimed(claim, value, constraints_values, None)
        return self._state.get("generation") != gen

    def tell_and_claim(self, claim, value, lease=None, constraints_values=None):
        """Tells the value of a claimed point, as ``tell_claim``, and claims
        this worker's next point in the same request (``tell?claim=true``):
        one request an evaluation instead of two. Returns the next Claim,
        or None when every point without a value is leased (as ``claim``).
        The claim is the worker's of ``claim`` (its id, or the claim's key),
        for ``lease`` seconds (None: the server's default). Raises as
        ``tell_claim`` and ``claim``."""
        q = {"claim": "true", "worker": str(claim.worker)}
        if lease is not None:
            q["lease"] = conv.integer(lease, "lease")
        state = self._tell_claimed(claim, value, constraints_values, q)
        nxt = state.pop("claim", None)
        self._state = state
        if nxt is None:
            # Nothing claimed (the session stopped, or the claim failed):
            # the claim on its own says why.
            return self.claim(lease, claim.worker)
        return _claim_of(nxt, claim.worker)

    def _tell_claimed(self, claim, value, constraints_values, query):
        """Sends the value of a claimed point (a partial tell) and returns
        the answer."""
        v = conv.fitness_value(value, "value")
        body = {"generation": claim.generation, "indices": [claim.index], "fitness": [v]}
        if constraints_values is not None:
            body["constraint_values"] = conv.constraint_values([constraints_values], 1)
        try:
            return self._req("POST", "/tell", body, query=query)
        except Stopped:
            self._refresh_quietly()
            raise

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
        b = self._req("GET", "/ask")
        g, cands = b["generation"], mixed.flat_batch(b)
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
        self._state = self._req("GET", "")
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
        # With bounds the server sends the mean's image in the box too.
        favorite = s.get("mean_in_bounds") or mean
        stds = s.get("stds")
        return Result(
            xbest=self._best_point(best),
            fbest=best.get("f"),
            evals_best=self._best_evaluations(best.get("generation")),
            evaluations=s.get("evaluations", 0),
            iterations=s.get("generation", 0),
            xfavorite=self._out(list(favorite)),
            stds=self._out(stds) if stds is not None else None,
            stop=self.stop(),
            best_generation=best.get("generation"),
            generation=s.get("generation", 0),
            mean=self._out(mean),
            sigma=s.get("sigma"),
            status=s.get("status", ""),
            session_id=s.get("id", ""),
        )

    def _best_point(self, b):
        """A best point of the state (best, best_feasible) as ask hands
        points out: a MixedPoint for a mixed session."""
        x = b.get("x")
        if self._space is None or x is None:
            return self._out(x)
        return mixed.MixedPoint(self._out(x), list(b.get("z") or []), list(b.get("c") or []))

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
        Stopped when the session has stopped. The injection carries an
        Idempotency-Key, so that when its answer is lost it is sent again
        and the points are queued once."""
        points = [p for p in conv.plain(points) if p is not None]
        if not points:
            raise ValueError("points is empty: inject at least one point")
        P = conv.matrix(points, "points")
        for i, x in enumerate(P):
            if len(x) != self.dimension:
                raise ValueError(f"points[{i}] has {len(x)} values, want {self.dimension}")
        try:
            ans = self._req("POST", "/inject", {"points": P, "clip": bool(clip)},
                            headers={"Idempotency-Key": "inject-" + uuid.uuid4().hex})
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
    algorithm = property(lambda self: self._state.get("algorithm"), doc='"self-cma-es", "cma-es" or "sep-cma-es".')
    dimension = property(lambda self: self._state.get("dimension"), doc="n.")
    population_size = property(
        lambda self: self._state.get("population_size"), doc="λ of the pending generation (it changes at a restart)."
    )
    popsize = population_size
    seed = property(lambda self: self._state.get("seed"), doc="The seed of the run.")
    status = property(lambda self: self._state.get("status"), doc='"running" or "stopped".')
    generation = property(lambda self: self._state.get("generation"), doc="Generations told (the pending one).")
    evaluations = property(lambda self: self._state.get("evaluations"), doc="Values told.")
    @property
    def sigma(self):
        """σ of the state, the step size (pycma's ``es.sigma``). The scale of
        the distribution is σ·√C: σ alone is not the step. The numerical
        safeguard of Hansen's cmaes.m (docs/algorithm.md) moves the scale
        from σ into C when σ exceeds 10^10·√λ_max(C), so σ can jump by
        orders of magnitude in one generation while the distribution does
        not change (self-CMA-ES in a long run: σ in the hundreds beside
        stds of 0.01). ``overall_step`` (σ·√λ_max(C), the longest axis)
        and ``stds`` (σ·√C_ii) are the steps that mean something.

        The service cannot set σ of a running session: ``es.sigma = v``
        (and ``es.sigma *= 0.5``) raises Unsupported saying what to do
        instead."""
        return self._state.get("sigma")

    @sigma.setter
    def sigma(self, value):
        raise Unsupported(
            f"es.sigma = {value!r}: the service does not change σ of a running session (its state changes only "
            "through tells, so that a run stays a pure function of its seed and its values). To go on with "
            f"another step size, start a session from this one: client.create(x0, new_sigma0, warm_start="
            f"{self._state.get('id')!r}) takes its mean as x0 and its best point as a first candidate"
        )

    @property
    def mean(self):
        """The mean of the distribution (pycma's ``es.mean``), unmapped by
        the bounds (``result.xfavorite`` is its image in the box); a numpy
        array when the session was made with numpy."""
        return self._out(self._state.get("mean") or [])

    @property
    def stds(self):
        """σ·√C_ii per coordinate, pycma's ``es.stds`` (a numpy array when
        the session was made with numpy); None from a server older than
        the field."""
        v = self._state.get("stds")
        return None if v is None else self._out(v)

    @property
    def overall_step(self):
        """σ·√λ_max(C): the standard deviation along the longest principal
        axis of the distribution, the step size that σ alone is not (see
        ``sigma``). Read from the last generation's record of the history
        (one request per new generation); σ at generation 0 and after a
        restart, where C is the identity."""
        g = self._state.get("generation") or 0
        if g == 0:
            return self.sigma
        if self._overall[0] != g:
            v = None
            recs = self.history(start=g - 1, limit=1)
            if recs and recs[0].get("generation") == g - 1:
                r = recs[0]
                v = self.sigma if r.get("restarted") else r.get("overall_step")
            self._overall = (g, v)
        return self._overall[1]

    @property
    def C(self):
        """pycma's ``es.C``: the covariance matrix C of the pending
        generation (of the primary CMA-ES for self-CMA-ES), which is sampled
        from N(mean, sigma² C); a numpy array (n × n) when the session was
        made with numpy, else a list of lists. One request per read.

        The server hands it out for sessions of at most 200 coordinates
        (a diagonal matrix for sep-cma-es); for larger ones, and from a
        server older than the endpoint, this
        raises Unsupported naming what there is instead (``stds``,
        ``overall_step``, the history's ``axis_lengths``)."""
        try:
            got = self._req("GET", "/covariance")
            c = got.get("c")
            if c is None:  # sep-cma-es above 200 coordinates: its C is diagonal
                raise Unsupported(
                    f"es.C: the C of this sep-cma-es session is diagonal ({len(got.get('c_diagonal') or [])} values); "
                    "es.stds are σ·√C_ii, es.sigma is σ"
                )
        except OutOfRange as e:
            raise Unsupported(f"es.C: {e.message}") from None
        except NotFound as e:
            if "no such route" not in (e.message or ""):
                raise
            raise Unsupported(
                "es.C: this server does not send the covariance matrix C (no /covariance: a server older than "
                "it). What it sends: es.stds (σ·√C_ii per coordinate), es.sigma, es.overall_step (σ·√λ_max(C)), "
                "and per generation in es.history(): axis_lengths (√ of C's eigenvalues, ascending) and axis_ratio"
            ) from None
        c = [[math.nan if v is None else v for v in row] for row in c]
        return self._np.array(c, dtype=float) if self._np is not None else c

    @property
    def best(self):
        """pycma's ``es.best``: the best point told so far, with ``.x``,
        ``.f`` and ``.evals`` (and ``get()``, the three). Before any value
        x is None and f is inf, as pycma's. evals counts to the end of the
        best point's generation (as ``result.evals_best``)."""
        b = self._state.get("best") or {}
        if b.get("f") is None:
            return BestSolution(None, math.inf, None)
        return BestSolution(self._best_point(b), b["f"], self._best_evaluations(b.get("generation")))

    @property
    def best_feasible(self):
        """pycma's ``es.best_feasible`` of a constrained session: the best
        point told whose constraint values were all known and ≤ 0, with
        ``.x``, ``.f``, ``.g`` (its m constraint values) and ``.evals``
        (numpy arrays when the session uses numpy). Before any, x and g
        are None and f is inf, as pycma's. ``best`` stays the best f told,
        feasible or not."""
        b = self._state.get("best_feasible") or {}
        if b.get("f") is None:
            return BestFeasible(None, math.inf, None, None)
        return BestFeasible(self._best_point(b), b["f"], self._out(b.get("g")), self._best_evaluations(b.get("generation")))

    @property
    def constraints(self):
        """A constrained session's augmented Lagrangian as the server
        holds it: ``{"count": m, "multipliers": [λ_i], "penalty_factors":
        [μ_i]}`` (None until set); None for an unconstrained session."""
        c = self._state.get("constraints")
        return dict(c) if c else None

    @property
    def logger(self):
        """pycma's ``es.logger``: the server records every generation
        itself, so ``add()`` does nothing; ``plot()`` opens the session's
        page (its plots) in a browser, or prints its address."""
        if self._logger is None:
            self._logger = Logger(self)
        return self._logger

    def plot(self, *args, **kwargs):
        """pycma's ``es.plot()``: ``es.logger.plot()``."""
        return self.logger.plot(*args, **kwargs)

    @property
    def page(self):
        """The address of the session's web page (its plots)."""
        path = (self._state.get("links") or {}).get("ui") or "/ui/sessions/" + self.id
        base = self._client._t.urls[self._route.index] if self._route is not None else self._client.url
        return base + path

    def history(self, start=0, limit=None):
        """One record per told generation, from generation ``start``, at most
        ``limit`` (None = all): dicts with generation, run, lambda,
        evaluations, best, median, best_so_far, sigma, c1, cmu, cc,
        axis_ratio, restarted (and for self-CMA-ES aux_mean, aux_sigma,
        aux_feasible)."""
        q = {"from": conv.integer(start, "start") if start else None}
        if limit is not None:
            q["limit"] = conv.integer(limit, "limit")
        return self._req("GET", "/history", query=q)["records"]

    def end(self):
        """Ends the session on the server, keeping it and its history: its
        status becomes stopped, ``stop()`` then gives ``{"requested": g}``
        (g generations told), and ask and tell raise Stopped. Ending an
        ended session changes nothing."""
        self._state = self._req("POST", "/stop")
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


class Logger:
    """pycma's ``es.logger`` (a CMADataLogger) for a session of the
    service, which records every generation itself (``es.history()``) and
    draws them on the session's page: ``add()`` does nothing, ``plot()``
    opens the page or prints its address."""

    modulo = 1

    def __init__(self, es):
        self._es = es

    def __repr__(self):
        return f"<selfcma.session.Logger of session {self._es.id}>"

    def add(self, *args, **kwargs):
        """Does nothing: the server has recorded the generation already."""
        return self

    def register(self, *args, **kwargs):
        return self

    def disp(self, *args, **kwargs):
        """Prints the session's page address."""
        print(f"session {self._es.id}: {self._es.page}", flush=True)

    def plot(self, *args, open=None, file=None, **kwargs):
        """Opens the session's page, whose plots are pycma's (f, σ, axis
        lengths, stds, the mean, the learning rates), in a browser when one
        that does not block this process is at hand, and prints its
        address. ``open=True`` opens it in any case, ``False`` only prints.
        Returns the address."""
        url = self._es.page
        opened = False
        if open or (open is None and _gui_browser()):
            try:
                opened = webbrowser.open(url)
            except Exception:  # a browser that fails leaves the address printed
                opened = False
        print(f"session {self._es.id}: {'opened ' if opened else ''}{url}", file=file or sys.stdout, flush=True)
        return url


def _gui_browser():
    """Whether webbrowser would start a graphical browser in the background
    (not a text browser in this terminal, which would block)."""
    import os

    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        b = webbrowser.get()
    except webbrowser.Error:
        return False
    return not (type(b) is webbrowser.GenericBrowser)


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def _claim_of(c, worker):
    """The Claim of a claim's answer; None when it leased no point."""
    if c.get("index") is None:
        return None
    return Claim(generation=c["generation"], index=c["index"], x=list(c["x"]), expires_at=c["expires_at"],
                 worker=str(worker), z=c.get("z"), c=c.get("c"))
