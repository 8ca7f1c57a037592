"""Client: a connection to a selfcma server, creating and attaching
sessions (pycma's options accepted), and the loops that drive them
(optimize, work, fmin2)."""

from __future__ import annotations

import os
import sys
import uuid
import warnings
from typing import Callable, List, Optional

from . import _convert as conv
from . import runner
from ._http import Transport
from .mixed import create_body as mixed_body
from .options import ignored, restarts_body, to_create
from .session import NUMPY_KEY, OPTIONS_KEY, Session

__all__ = ["Client"]

DEFAULT_URL = "http://127.0.0.1:8080"


class Client:
    """A connection to a selfcma server.

    Args:
        url: the server, ``http://host:port`` (default http://127.0.0.1:8080),
            or ``https://host:port`` for a server started with -tls-cert;
            or several servers that share one database (PostgreSQL), as a
            list or one string separated by commas: a request that gets no
            answer, or 502/503/504, goes to the next server at once, and a
            session stays on the server that answers it.
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

    A Client is thread-safe. Each thread that uses it keeps a connection
    to the server open between requests (one idle for 30 s is not used
    again; one the server closed is opened again, not counted as a
    retry); close(), or leaving its ``with`` block, closes them. It pickles as its
    URLs and settings without the token: unpickled, it takes the token from
    the environment variable SELFCMA_TOKEN.

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
        self._settings = dict(timeout=timeout, retries=retries, backoff=backoff, max_backoff=max_backoff,
                              cafile=cafile)

    @property
    def url(self):
        """The server the client sends to now (the first of ``urls`` until
        it fails to answer)."""
        return self._t.url

    @property
    def urls(self):
        """The servers, in the order given."""
        return list(self._t.urls)

    def __repr__(self):
        return f"<selfcma.Client {' '.join(self._t.urls)}>"

    def __reduce__(self):
        # Not the token: a pickle is often a file. SELFCMA_TOKEN gives it.
        return (_unpickle_client, (self.urls, self._settings))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Closes the connections the client keeps open; a request after
        close opens a new one."""
        self._t.close()

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
        inopts=None,
        *,
        population_size=None,
        algorithm=None,
        seed=None,
        bounds=None,
        restarts=None,
        termination=None,
        name=None,
        metadata=None,
        hyperparameters=None,
        idempotency_key=None,
        numpy=None,
        warm_start=None,
        active=None,
        mirrored=None,
        mean_rate=None,
        bipop=False,
        incpopsize=None,
        constraints=None,
        integers=None,
        categories=None,
    ):
        """Creates a session and returns it (a Session), as pycma's
        ``CMAEvolutionStrategy(x0, sigma0, inopts)``.

        Args:
            x0: the initial mean, n finite numbers (a list or an array).
            sigma0: the initial step size, > 0.
            inopts: pycma's options dict, with pycma's names:
                ``{'popsize': 20, 'seed': 3, 'bounds': [0, None],
                'maxfevals': 1e4, 'maxiter': 500, 'ftarget': 1e-8,
                'tolfun': 1e-11, 'tolx': 1e-11, 'tolconditioncov': 1e14,
                'tolupsigma': 1e20, 'verb_disp': 100, 'verbose': 3,
                'CMA_active': True, 'CMA_diagonal': False}``
                (``selfcma.options.SUPPORTED`` says what each does here).
                pycma's logging options (``verb_log``, ``verb_time``,
                ``verb_plot``, ``verb_filenameprefix``, ...) are accepted
                and ignored, with one warning; any other option without a
                counterpart in the service raises ValueError listing those
                supported. They are kept in the session's metadata
                (``es.opts``, also when attached from another process).
            population_size: λ; None for the server's default
                (self-cma-es: max(100, 4 + ⌊3 ln n⌋); cma-es: 4 + ⌊3 ln n⌋).
            algorithm: ``"self-cma-es"``, ``"cma-es"`` or ``"sep-cma-es"``
                (C kept diagonal, as pycma's ``CMA_diagonal=True``, which
                selects it too; n up to 10^5); None (default): the server's
                default, which ``es.algorithm`` reports.
            seed: an unsigned 64-bit integer; None lets the server draw one
                (``Session.seed`` reports it). The run is a pure function of
                the seed and the told values.
            bounds: a box every candidate lies in: ``[lower, upper]`` (each a
                number or n numbers, as in pycma) or
                ``{"lower": [...], "upper": [...]}``.
            restarts: None (default): the server's default restarts
                (``es.info["restarts"]`` reports them); pycma's: an int k,
                the number of restarts (IPOP: λ grows by incpopsize at
                each; with ``bipop=True``, BIPOP; 0: none, one run);
                or ``"ipop"``/``"bipop"`` (the server's number of
                restarts); or the server's object ``{"strategy": "ipop",
                "max": k, "incpopsize": 2, "point": "x0" or "uniform",
                "region": [lower, upper], "spare_best_small": bool}``
                (region: where uniform restart points are drawn, pycma's
                form or {"lower", "upper"}; spare_best_small: with bipop
                and nbipop, a small run that found the best point outlives
                its generation limit, the server's default; pycma has no
                such option).
            bipop: pycma's: True selects BIPOP-CMA-ES restarts (with
                restarts, or alone: the server's number of restarts).
            incpopsize: pycma's: the factor λ grows by at each restart
                (None: the server's, 2); needs restarts or bipop.
            active: active CMA-ES (negative weights in C's update), the
                service's name of pycma's option ``CMA_active``; None: the
                server's default.
            mirrored: mirrored sampling in the first run and BIPOP's small
                runs (the last ⌊λ/2⌋ candidates of a generation mirror the
                first about the mean; pycma's CMA_mirrors = 0.5 with
                CMA_mirrormethod = 0, there in every run); None: the
                server's default.
            mean_rate: the large restarts adapt the mean's learning rate
                (LRA-CMA-ES's rule on the mean alone; pycma has no such
                option); None: the server's default (on for self-cma-es,
                off for cma-es). The
                new fields (active, mirrored, mean_rate, bipop,
                incpopsize, point, region) are sent only when given, so
                that a server without them sees the same requests as
                before.
            termination: ``{"target_fitness": 1e-8, "max_evaluations": 10000,
                "tol_fun": ..., "tol_x": ..., "tol_worse": 0, ...}``
                (api/openapi.yaml; ``tol_worse``, ours, ends a restart that
                converges onto a point worse than an earlier run's best; 0
                turns it off; ``tol_worse_delta`` spares a restart that
                came within that fraction of its descent of the best).
            name: a label; metadata: any JSON object, echoed back.
            hyperparameters: self-cma-es only, ``"default"`` or
                ``"uniform"`` (the auxiliary CMA-ES's initial mean), or
                ``{"init": ..., "snr": False}`` (``snr``: whether the first
                run adapts cmu by the signal-to-noise rule; False gives
                the paper's h_t from λ = 10n; the server's default is
                True).
            idempotency_key: the create's Idempotency-Key (1 to 255
                visible ASCII characters); None draws a random UUID. The
                create is retried with it after a timeout or a lost answer,
                and the server makes at most one session for a key: pass
                your own to make a create that a crashed script runs again
                find the session of its first run (with the same
                arguments; others raise OutOfRange).
            numpy: whether ask and result give numpy arrays; None: when x0
                is a numpy array (numpy is imported only then). A session
                made with numpy is marked so in its metadata: attached by
                id (``client.session(id)``, a pickle) it gives numpy too.
            warm_start: another session (a Session or its id) to start
                from: the server takes its mean as x0 and injects its best
                point into the first batch (servers with injected points).
            constraints: m, the number of constraints g_i(x) ≤ 0 (None:
                unconstrained). Every tell then gives their values
                (``es.tell(X, F, constraints_values=G)``, G one row of m
                per point), the server ranks by pycma's augmented
                Lagrangian (``ConstrainedFitnessAL``), and
                ``es.best_feasible`` is the best feasible point.
            integers, categories: a mixed session (the server's CatCMA with
                margin, algorithm ``catcma``): the sorted values of each
                integer variable (``[[0, 1, 2, 3], [0.01, 0.1, 1]]``) and
                the number of choices of each categorical variable
                (``[3, 5]``). ask then returns MixedPoints (x, z, c), and
                tell takes them back. x0 (the continuous coordinates) may be
                None or empty, sigma0 None (the server's 1, scaling the box
                widths).

        Raises OutOfRange (a ValueError) or InvalidRequest for values the
        server refuses; TypeError or ValueError before sending for values
        that are not numbers, and for options given twice (``popsize`` and
        population_size, ``ftarget`` and termination's target_fitness).
        """
        if numpy is None:
            numpy = conv.uses_numpy(x0)
        if inopts is not None and not isinstance(inopts, dict):
            if population_size is None and not isinstance(inopts, (str, bytes, list, tuple)):
                population_size, inopts = inopts, None  # create(x0, sigma0, λ): the earlier signature
            else:
                raise TypeError(f"inopts is {type(inopts).__name__}, want a dict of pycma's options")
        is_mixed = integers is not None or categories is not None or algorithm == "catcma"
        x0 = conv.vector([] if x0 is None and is_mixed else x0, "x0")
        body = {"x0": x0}
        if sigma0 is not None or not is_mixed:
            body["sigma0"] = conv.number(sigma0, "sigma0")
        mixed_body(body, integers, categories)
        from_opts, _ = to_create(inopts, len(x0))
        if population_size is not None:
            body["population_size"] = conv.integer(population_size, "population_size")
        if algorithm is not None:
            body["algorithm"] = algorithm
        if seed is not None:
            body["seed"] = conv.integer(seed, "seed")
        if bounds is not None:
            body["bounds"] = conv.bounds(bounds, len(x0))
        if active is not None:
            if not isinstance(active, bool):
                raise TypeError(f"active is {active!r}: want True or False")
            body["active"] = active
        if mirrored is not None:
            if not isinstance(mirrored, bool):
                raise TypeError(f"mirrored is {mirrored!r}: want True or False")
            body["mirrored"] = mirrored
        if mean_rate is not None:
            if not isinstance(mean_rate, bool):
                raise TypeError(f"mean_rate is {mean_rate!r}: want True or False")
            body["mean_rate"] = mean_rate
        r = restarts_body(restarts, bipop, incpopsize, len(x0))
        if r is not None:
            body["restarts"] = r
        if termination is not None:
            body["termination"] = conv.plain_json(termination)
        for k, v in from_opts.items():
            if k == "termination" and "termination" in body:
                twice = sorted(set(v) & set(body["termination"]))
                if twice:
                    raise ValueError(f"termination {twice} given both as pycma options and in termination=")
                body["termination"] = dict(body["termination"], **v)
            elif k in body:
                raise ValueError(f"{k} given both in the pycma options and as {k}=")
            else:
                body[k] = v
        if constraints is not None:
            body["constraints"] = {"count": conv.integer(constraints, "constraints")}
        if warm_start is not None:
            ws = warm_start.id if isinstance(warm_start, Session) else warm_start
            if not isinstance(ws, str) or not ws:
                raise TypeError(f"warm_start is {warm_start!r}: want a Session or a session id")
            body["warm_start"] = {"session": ws}
        if name is not None:
            body["name"] = name
        if metadata is not None or inopts or numpy:
            metadata = conv.plain_json(dict(metadata or {}))
            if inopts:
                metadata.setdefault(OPTIONS_KEY, conv.storable(inopts))
            if numpy:
                metadata.setdefault(NUMPY_KEY, True)
            body["metadata"] = metadata
        if hyperparameters is not None:
            if isinstance(hyperparameters, str):
                hyperparameters = {"init": hyperparameters}
            body["hyperparameters"] = conv.plain_json(hyperparameters)
        if idempotency_key is None:
            idempotency_key = str(uuid.uuid4())
        skipped = ignored(inopts)
        if skipped:
            warnings.warn(
                f"selfcma ignores pycma's logging option{'s' if len(skipped) > 1 else ''} {', '.join(skipped)}: "
                "the server records every generation (es.history(), the session's page: es.logger.plot())",
                stacklevel=_caller_level(),
            )
        route = self._t.route()
        state = self._t.request("POST", "/v1/sessions", body, headers={"Idempotency-Key": idempotency_key},
                                route=route)
        return Session(self, state, numpy=numpy, route=route)

    def session(self, session_id, *, numpy=None):
        """Attaches to an existing session (to resume it, from any process):
        its state is read now, and ``ask`` hands out its pending batch (as
        numpy arrays with ``numpy=True``; None: as the session was created,
        numpy when its x0 was a numpy array). Raises NotFound when there is
        none with that id."""
        if not isinstance(session_id, str) or not session_id or "/" in session_id:
            raise ValueError(f"session id {session_id!r}: want the id string of a session")
        route = self._t.route()
        return Session(self, self._t.request("GET", "/v1/sessions/" + session_id, route=route), numpy=numpy,
                       route=route)

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

    def work(self, f, session_id, *, lease=None, poll=1.0, max_evaluations=None, worker=None):
        """Runs one worker of session ``session_id`` until it stops: claims
        a point (``Session.claim``), evaluates f on it in this thread and
        tells the value, again and again. Start as many workers as you
        like, anywhere (one per node of a cluster, say): each point is
        evaluated by one of them. A worker that stops (KeyboardInterrupt,
        SystemExit) releases its point to the others at once; one that dies
        leaves it to another once its lease runs out (a minute by default).

        An evaluation that raises, or returns None, NaN or something that
        is not a number, is told as a failed evaluation (None) with a
        warning. When no point is free the worker sleeps ``poll`` seconds.
        ``worker`` names it to the server (default: a random id), which
        makes its claims safe to send again. While f runs, the worker renews
        its lease every half lease (``lease`` seconds, None = the server's
        default of a minute), so an evaluation may take longer than the
        lease: the point goes to another worker only when this one has
        stopped renewing. Returns the number of evaluations it made (at
        most ``max_evaluations``, None = no limit).
        """
        return runner.work(self, f, session_id, lease=lease, poll=poll, max_evaluations=max_evaluations,
                           worker=worker)

    def optimize(
        self,
        f: Callable[[List[float]], Optional[float]],
        x0=None,
        sigma0=None,
        options=None,
        *,
        workers=4,
        session_id=None,
        executor=None,
        save_interval=10.0,
        verbose=False,
        callback=None,
        max_failed_generations=runner.MAX_FAILED_GENERATIONS,
        **kw,
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
            x0, sigma0, options, **kw: a new session, as for ``create``
                (options: pycma's options dict; kw: population_size,
                algorithm, seed, bounds, restarts, termination, name,
                metadata, hyperparameters).
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
            max_failed_generations: when every evaluation of this many
                generations in a row failed, optimize stops and raises the
                objective's last exception (EvaluationError when it raised
                none but returned None or NaN); None never gives up.

        Several processes may run optimize on the same session: a
        generation another one told first is skipped (a warning), and the
        loop ends when the session stops.

        On KeyboardInterrupt (Ctrl-C) the session stays intact on the server:
        the message printed to stderr names it and the call that resumes it,
        ``client.optimize(f, session_id=...)``; then the KeyboardInterrupt is
        raised again.
        """
        runner.check(f, executor, max_failed_generations)
        if session_id is not None:
            es = self.session(session_id)
        else:
            if x0 is None or sigma0 is None:
                raise TypeError("optimize needs x0 and sigma0, or the session_id of a session to resume")
            es = self.create(x0, sigma0, options, **kw)
        return runner.optimize(self, f, es, resumed=session_id is not None, workers=workers, executor=executor,
                               save_interval=save_interval, verbose=verbose, callback=callback,
                               max_failed_generations=max_failed_generations)

    def fmin2(self, f, x0, sigma0, options=None, args=(), gradf=None, restarts=0, restart_from_best=False,
              incpopsize=2, eval_initial_x=False, parallel_objective=None, noise_handler=None,
              noise_change_sigma_exponent=1, noise_kappa_exponent=0, bipop=False, callback=None, init_callback=None,
              **kw):
        """Minimizes f like pycma's ``cma.fmin2`` (the same arguments, in
        the same order) and returns ``(xbest, es)``: the best point (a numpy
        array when x0 is one) and the Session.

        Args:
            f: the objective, called as f(x, *args).
            x0, sigma0, options: as for ``create`` (options: pycma's dict:
                popsize, seed, bounds, maxfevals, maxiter, ftarget, tolfun,
                tolx, tolconditioncov, tolupsigma, CMA_active, verb_disp,
                verbose; the verb_* logging options are ignored).
            restarts: pycma's number of restarts (0, pycma's default: one
                run, no restart), or its dict ``{'maxrestarts': k}``; the
                server restarts the session (IPOP, λ growing by
                ``incpopsize`` at each; BIPOP with ``bipop=True``, which
                takes effect with restarts > 0, as in pycma). None: the
                server's default restarts (those of a session created
                without them; ``es.info["restarts"]`` says which). A
                session runs all its restarts: ``es`` is the one session,
                ``es.info["restarts"]`` tells its runs.
            callback: a callable or a list, each called as callback(es)
                after every iteration; init_callback: once, with es, before
                the first.
            gradf, restart_from_best, eval_initial_x, parallel_objective,
            noise_handler: pycma's, without a counterpart here: a value
                other than the default raises Unsupported saying what to do
                instead. noise_change_sigma_exponent and
                noise_kappa_exponent act with noise_handler only, as in
                pycma.
            **kw: create's keywords (algorithm, name, ...) and optimize's
                (workers, default 1: f is evaluated in this thread as
                pycma does; executor; max_failed_generations).

        Prints a line every ``verb_disp`` iterations (default 100) and
        ``result_pretty()`` at the end, unless options has verbose < 0.
        """
        return runner.fmin2(self, f, x0, sigma0, options, args, gradf=gradf, restarts=restarts,
                            restart_from_best=restart_from_best, incpopsize=incpopsize, eval_initial_x=eval_initial_x,
                            parallel_objective=parallel_objective, noise_handler=noise_handler, bipop=bipop,
                            callback=callback, init_callback=init_callback, **kw)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _caller_level():
    """warnings.warn's stacklevel of the first caller outside this package
    (a warning of create points at the user's line, also through fmin2)."""
    f, level = sys._getframe(1), 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE:
        f, level = f.f_back, level + 1
    return level


def _unpickle_client(urls, settings):
    return Client(urls, token=os.environ.get("SELFCMA_TOKEN") or None, **settings)
