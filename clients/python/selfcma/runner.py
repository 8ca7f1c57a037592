"""The loops that evaluate an objective for a session: ``optimize`` (a
generation at a time, in parallel, resumable), ``work`` (one claimed point at
a time, for workers of a cluster) and pycma's ``fmin2``."""

from __future__ import annotations

import concurrent.futures
import logging
import pickle
import sys
import threading
import time
import uuid

from . import _convert as conv
from .errors import Conflict, EvaluationError, Stopped, Unsupported

__all__ = ["optimize", "work", "fmin2", "MAX_FAILED_GENERATIONS"]

log = logging.getLogger("selfcma")

# The server's default lease, in seconds: a worker renews its lease every
# half lease while it evaluates.
DEFAULT_LEASE = 60

# Generations in a row in which every evaluation failed before optimize
# gives up and raises the objective's exception (issue: an objective that
# fails on every point would otherwise be told None for ever).
MAX_FAILED_GENERATIONS = 3



class _Call:
    """f wrapped so that its exceptions come back as data: whatever else a
    future raises is a fault of the executor, not a failed evaluation.
    Module level, so that it pickles for process pools; ``portable`` makes
    the exception one that pickles (for a process pool's answer)."""

    def __init__(self, f, args=(), portable=False):
        self.f = f
        self.args = tuple(args)
        self.portable = portable

    def __call__(self, x):
        try:
            return True, self.f(x, *self.args)
        except Exception as e:  # a failed evaluation; KeyboardInterrupt passes
            if self.portable:
                try:
                    pickle.loads(pickle.dumps(e))
                except Exception:
                    e = RuntimeError(f"{type(e).__name__}: {e}")
            return False, e


def _why(v):
    """A failure's description: an exception's type and message, or the
    text itself."""
    if isinstance(v, BaseException):
        return f"{type(v).__name__}: {v}"
    return str(v)


def _told_value(ok, v, name):
    """(value, failure): what to tell for the outcome (ok, v) of a _Call,
    and why the evaluation failed (the exception, or a text; None if it did
    not)."""
    if not ok:
        return None, v
    try:
        v = conv.fitness_value(v, name)
    except (TypeError, ValueError) as e:
        return None, str(e)
    return v, ("returned None, NaN or +inf" if v is None else None)


def _evaluate(call, X, todo, pool, generation, sink):
    """Evaluates X[i] for each i in todo and calls sink(i, value) as each
    value is known (in the order the evaluations finish, with a pool): a
    float, or None for a failed evaluation. Returns the failures, a list of
    (i, exception or text)."""
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
            _why(why),
            more,
        )
    return failures


class _FailedGenerations:
    """Counts the generations in a row in which every evaluation failed,
    and raises the objective's last exception once there are ``limit``."""

    def __init__(self, limit, es):
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
            raise ValueError(f"max_failed_generations {limit!r}: want an integer ≥ 1, or None for no limit")
        self.limit, self.es, self.count = limit, es, 0

    def add(self, evaluated, failures):
        if evaluated == 0:
            return
        if len(failures) < evaluated:
            self.count = 0
            return
        self.count += 1
        if self.limit is None or self.count < self.limit:
            return
        excs = [w for _, w in sorted(failures, key=lambda f: f[0]) if isinstance(w, BaseException)]
        msg = (
            f"every evaluation failed in {self.count} generations in a row (session {self.es.id}, "
            f"generation {self.es.generation}): giving up; fix the objective and resume with "
            f"client.optimize(f, session_id={self.es.id!r})"
        )
        log.error("selfcma: %s", msg)
        if excs:
            raise excs[0]
        raise EvaluationError(f"{msg}; the last failure: {_why(failures[0][1])}")


def _renewing(es, claim, lease, worker, evaluate):
    """evaluate(), while a thread renews the worker's lease of the claimed
    point every half lease (and takes it again after a restart of the
    server); the renewals stop with the evaluation."""
    done = threading.Event()

    def renew():
        while not done.wait((lease or DEFAULT_LEASE) / 2):
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


def check(f, executor, max_failed_generations):
    """Refuses optimize's arguments before a session is made for them."""
    if not callable(f):
        raise TypeError(f"f is {type(f).__name__}, want a callable")
    if not (executor in (None, "threads", "processes") or hasattr(executor, "submit")):
        raise ValueError(f"executor {executor!r}: want None, 'threads', 'processes' or an Executor")
    _FailedGenerations(max_failed_generations, None)


def optimize(client, f, es, *, resumed, workers, executor, save_interval, verbose, callback,
             max_failed_generations=MAX_FAILED_GENERATIONS, args=()):
    """The loop of Client.optimize on the session es (see there)."""
    check(f, executor, max_failed_generations)
    failed = _FailedGenerations(max_failed_generations, es)
    every = int(verbose) if verbose else 0
    own = pool = None
    if executor == "processes":
        own = pool = concurrent.futures.ProcessPoolExecutor(workers)
    elif executor not in (None, "threads"):
        pool = executor
    elif workers > 1:
        own = pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="selfcma-eval")

    call = _Call(f, args, portable=pool is not None and not isinstance(pool, concurrent.futures.ThreadPoolExecutor))
    try:
        if every:
            how = "resumed" if resumed else "created"
            print(
                f"selfcma: session {es.id} {how} ({es.algorithm}, n={es.dimension}, "
                f"λ={es.population_size}, seed={es.seed}, generation {es.generation})",
                flush=True,
            )
            print(es.PROGRESS_HEADER, flush=True)
        while not es.stop():
            try:
                X = es.ask()
                held = es._held()
                teller = _Teller(es, X, held, save_interval)
                todo = [i for i in range(len(X)) if i not in held]
                failures = _evaluate(call, X, todo, pool, es.generation, teller.add)
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
            failed.add(len(todo), failures)
            if every and (es.generation % every == 0 or es.stop()):
                print(es.progress_line(), flush=True)
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
            f"with client = selfcma.Client({_urls_repr(client)}), or attach with client.session({es.id!r}).",
            file=sys.stderr,
            flush=True,
        )
        raise
    finally:
        if own is not None:
            own.shutdown(wait=True)
    if es._stopped_locally():
        es.end()  # maxiter: the client's criterion ends the server's session too
    if every and es.stop():
        reasons = ", ".join(f"{k}={v}" for k, v in es.stop().items())
        print(f"selfcma: session {es.id} stopped: {reasons}", flush=True)
    return es


def _urls_repr(client):
    urls = getattr(client, "urls", None) or [client.url]
    return repr(urls[0] if len(urls) == 1 else urls)


def _release_quietly(es, claim, worker):
    """Releases the worker's lease of claim, if the server answers."""
    try:
        es.release(claim, worker)
    except Exception as e:  # the lease runs out by itself
        log.warning("selfcma: session %s: the lease of candidate %d was not released: %s", es.id, claim.index, e)


def work(client, f, session_id, *, lease, poll, max_evaluations, worker):
    """The loop of Client.work (see there)."""
    if not callable(f):
        raise TypeError(f"f is {type(f).__name__}, want a callable")
    worker = worker or "worker-" + uuid.uuid4().hex
    es = client.session(session_id)
    call, done = _Call(f), 0
    c = None  # the claim the last tell answered, if any
    while max_evaluations is None or done < max_evaluations:
        try:
            if c is None:
                c = es.claim(lease, worker)
            if c is None:
                time.sleep(poll)
                continue
            try:
                v, why = _told_value(*_renewing(es, c, lease, worker, lambda: call(es._out(c.x))), "f(x)")
            except BaseException:
                # The worker stops (KeyboardInterrupt, SystemExit, a fault
                # of the pool): the point goes back at once, not when its
                # lease runs out.
                _release_quietly(es, c, worker)
                raise
            done += 1
            if why is not None:
                log.warning("selfcma: generation %d: the evaluation of candidate %d failed: %s; told as None",
                            c.generation, c.index, _why(why))
            if max_evaluations is not None and done >= max_evaluations:
                es.tell_claim(c, v)
                break
            # The value, and the next claim in the same request.
            c = es.tell_and_claim(c, v, lease)
        except Stopped:
            break
        except Conflict as e:
            c = None
            log.warning("selfcma: session %s: %s; claiming again", es.id, e.message)
    return done


NOISE_ADVICE = (
    "selfcma has no noise handling (pycma's NoiseHandler re-evaluates points and raises σ, which the service "
    "does not do). For a noisy objective, instead: a larger population (options {'popsize': 4 * default} or "
    "more, which averages the noise in the update), and, where an evaluation's noise is large, the mean of "
    "several evaluations in the objective (lambda x: statistics.mean(f(x) for _ in range(k)))"
)


def _callbacks(callback, name):
    if callback is None:
        return []
    if callable(callback):
        return [callback]
    out = list(callback)
    for c in out:
        if not callable(c):
            raise ValueError(f"{name} {c!r} is not callable")
    return out


def fmin2(client, f, x0, sigma0, options=None, args=(), *, gradf=None, restarts=0, restart_from_best=False,
          incpopsize=2, eval_initial_x=False, parallel_objective=None, noise_handler=None, bipop=False,
          callback=None, init_callback=None, workers=1, executor=None,
          max_failed_generations=MAX_FAILED_GENERATIONS, **kw):
    """The body of Client.fmin2 (see there)."""
    if noise_handler is not None and noise_handler is not False:
        raise Unsupported(f"fmin2(noise_handler=...): {NOISE_ADVICE}")
    if gradf is not None:
        raise Unsupported("fmin2(gradf=...): the server samples every batch itself; a gradient cannot steer it")
    if restart_from_best and restart_from_best != "False":
        raise Unsupported(
            "fmin2(restart_from_best=True): the server restarts from x0, or from uniform points of a region "
            "(client.create(..., restarts={'strategy': 'ipop', 'max': k, 'point': 'uniform', "
            "'region': [lower, upper]}))"
        )
    if eval_initial_x:
        raise Unsupported("fmin2(eval_initial_x=True): to evaluate x0, inject it: es = client.create(...); "
                          "es.inject([x0]) makes it a candidate of the second batch")
    if parallel_objective is not None:
        raise Unsupported("fmin2(parallel_objective=...): give f, evaluated in parallel with workers=k "
                          "(threads) or executor='processes'")
    if isinstance(restarts, dict):
        unknown = set(restarts) - {"maxrestarts"}
        if unknown:
            raise ValueError(f"restarts {restarts!r}: of pycma's dict, only 'maxrestarts' is taken here "
                             "(the options' maxfevals bounds the whole run)")
        restarts = restarts.get("maxrestarts", 0)
    if restarts is None:
        # The server's default restarts (bipop and incpopsize on top of them).
        if bipop:
            kw["bipop"] = True
        if incpopsize is not None and conv.number(incpopsize, "incpopsize") != 2:
            kw["restarts"] = {"incpopsize": incpopsize}
    else:
        restarts = conv.integer(restarts, "restarts")
        if restarts < 0:
            raise ValueError(f"restarts is {restarts}: want the number of restarts, ≥ 0")
        kw["restarts"] = restarts  # 0, pycma's default: one run
        if restarts:
            if bipop:
                kw["bipop"] = True
            if incpopsize is not None and conv.number(incpopsize, "incpopsize") != 2:
                kw["incpopsize"] = incpopsize
        elif bipop:
            log.warning("selfcma: fmin2(bipop=True) with restarts=0 makes no restart, as in pycma: give restarts=k")
    callbacks = _callbacks(callback, "callback")
    inits = _callbacks(init_callback, "init_callback")
    check(f, executor, max_failed_generations)
    es = client.create(x0, sigma0, options, **kw)
    for c in inits:
        c(es)
    local = es._local
    verbose = local.get("verbose", 3)
    verb = local.get("verb_disp", 100) if verbose >= 0 else 0

    def after(es):
        for c in callbacks:
            c(es)
        return False

    es = optimize(client, f, es, resumed=False, workers=workers, executor=executor, save_interval=10.0,
                  verbose=verb, callback=after if callbacks else None, max_failed_generations=max_failed_generations,
                  args=args)
    if verbose >= 1:
        es.result_pretty()
    return es.result.xbest, es
