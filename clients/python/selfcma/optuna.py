"""An Optuna sampler that runs the study's CMA-ES or self-CMA-ES in the
selfcma service: ``SelfCmaSampler``.

Needs Optuna (3.1 or later; Debian's ``python3-optuna``); the rest of the
package does not. A study that runs as written against a server
(``go run ./cmd/server``; SELFCMA_URL points elsewhere)::

    import math
    import os
    import optuna
    from selfcma.optuna import SelfCmaSampler

    def objective(trial):
        x = trial.suggest_float("x", -5, 5)
        y = trial.suggest_float("y", -5, 5)
        lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
        return (x - 1) ** 2 + (y + 2) ** 2 + (math.log10(lr) + 3) ** 2

    sampler = SelfCmaSampler(os.environ.get("SELFCMA_URL", "http://127.0.0.1:8080"), seed=1)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=200, n_jobs=3)

How it maps a study onto a session:

- The float parameters of the study's search space (the intersection of the
  completed trials', as Optuna's CmaEsSampler infers it) are the session's
  coordinates, in sorted order, boxed by their ranges; a log-scaled one is
  searched in log space (its coordinate is ln(value)).
- Integer parameters (with their step; a log-scaled one by the logarithms
  of its values), float parameters with a step (of at most 10000
  values) and categorical parameters are the session's integer and
  categorical variables (``mixed=True``, the default): the session is then
  a mixed one, CatCMA with margin (the server's ``catcma``,
  docs/mixed.md), as Optuna's CmaEsSampler(with_margin=True) models
  discrete parameters. With ``mixed=False`` (the behaviour before) a
  float with a step is rounded to it (the candidate, unrounded, is what
  the ES learns from), and integer and categorical parameters are sampled
  by the independent sampler.
- Every parameter of the first trials (before a trial has completed, the
  search space is unknown) is sampled by an independent sampler
  (RandomSampler by default), as Optuna's CmaEsSampler does.
- The session is found through the study's system attributes
  (``selfcma:session:<hash of the search space>``), so every worker of the
  study (threads of ``n_jobs``, processes on one RDB storage, a study
  resumed in another process) drives the same session. Workers that start
  it at the same moment create it with the same Idempotency-Key, so the
  server makes one.
- Each trial claims one candidate under a lease (``lease`` seconds,
  renewed every half lease while the trial runs) and
  tells its value as a partial tell when the trial ends (``after_trial``):
  a completed trial its value (negated for a maximized study), a failed or
  pruned trial None (a failed evaluation, ranked worst). When every
  candidate of the pending generation is claimed, a new trial waits
  (polling every ``poll`` seconds) until the generation completes; while it
  waits it tells again the values of finished trials of the generation,
  which takes the candidates of trials that Optuna failed as stale
  (heartbeat) without telling the sampler. A trial that dies without
  ending (its process killed) leaves its candidate to another trial once
  the lease runs out.
- A trial enqueued with all the float parameters (``study.enqueue_trial``),
  once the search space is known (after the first completed trial), is
  injected into the session (``Session.inject``): the point becomes a
  candidate of the next batch sampled, which a later trial evaluates. The
  enqueued trial itself runs with its parameters as Optuna fixes them.
- When the session stops (a termination criterion, or its end), the
  sampler starts a new session for the study, from the best point of the
  stopped one with the initial σ0 (a restart).
- With ``constraints_func`` (Optuna's: a trial's constraint values, each
  ≤ 0 when feasible), the session is a constrained one (its m from the
  first completed trial's values) and each trial tells its constraint
  values with its value: the server ranks by pycma's augmented Lagrangian
  rather than by the value alone (docs/constraints.md). The values are
  stored on the trial as Optuna's own samplers store them, so
  ``study.best_trials`` and Optuna's tools see them; a failed or pruned
  trial tells them as unknown.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import time

try:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.samplers import BaseSampler, IntersectionSearchSpace, RandomSampler
    from optuna.study import StudyDirection
    from optuna.trial import TrialState
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "selfcma.optuna needs Optuna (pip install optuna, or Debian's python3-optuna)"
    ) from e

try:  # Optuna's convention for constraint values (3.0 and later)
    from optuna.samplers._base import _CONSTRAINTS_KEY, _process_constraints_after_trial
except ImportError:  # pragma: no cover - depends on Optuna's version
    _CONSTRAINTS_KEY, _process_constraints_after_trial = "constraints", None

from .client import Client
from .errors import Conflict, NotFound, OutOfRange, SelfCMAError, Stopped
from .result import Claim

__all__ = ["SelfCmaSampler"]

log = logging.getLogger("selfcma")

SESSION_ATTR = "selfcma:session:"  # + the search space's hash: {"id": ..., "restarts": k}
CLAIM_ATTR = "selfcma:claim"  # on a trial: {"session", "generation", "index"}
INJECT_ATTR = "selfcma:injected"  # on an enqueued trial: {"session", "generation"}

# Seconds between two looks at the finished trials while every candidate is
# leased (SelfCmaSampler.sample_relative).
SWEEP_INTERVAL = 5.0

# The most negative finite number: what a value of -inf is told as (the
# service takes finite numbers, or null for a failed evaluation).
_MOST_NEGATIVE = -1.7976931348623157e308


# σ0 of a mixed session (CatCMA with margin), on the C the server starts
# from the box: the reference's 1 starts wide (a std of 2 on an int in
# [-5, 5], where CmaEsSampler(with_margin=True) has 1/6) and was behind
# CmaEsSampler's median at 300 trials on scripts/optuna_mixed_bench.py;
# 0.35 measured better there at 300 and no worse at 500 and 1000
# (docs/mixed.md, "Optuna on a mixed problem").
MIXED_SIGMA0 = 0.35

# σ0 of a mixed session with constraints_func. The augmented Lagrangian
# sets its multipliers from the first generation's spread of f over the
# spread of each g_i (pycma's set_coefficients) and lowers them by at most
# μ_i |g_i| / 5 a generation, slowly where g_i cannot go far below 0 (a
# product of positive parameters under a bound): a wide first generation
# then over-penalizes for hundreds of trials. On the constrained problem of
# scripts/optuna_mixed_bench.py (-constrained), median best feasible value
# at 300 trials over seeds 1-10 by σ0: 1 5.78, 0.6 4.69, 0.35 4.55, 0.25
# 3.33, 0.2 3.46, 0.15 3.81 (docs/mixed.md, "Optuna with constraints").
MIXED_CONSTRAINED_SIGMA0 = 0.25

# The most values of one integer variable (the server's MaxIntegerValues).
MAX_INTEGER_VALUES = 10000


def _discrete_values(d):
    """The values of an integer or stepped float distribution, None when it
    has none or more than MAX_INTEGER_VALUES."""
    if isinstance(d, IntDistribution):
        n = (d.high - d.low) // d.step + 1
        return list(range(d.low, d.high + 1, d.step)) if n <= MAX_INTEGER_VALUES else None
    if isinstance(d, FloatDistribution) and d.step is not None:
        n = int(round((d.high - d.low) / d.step)) + 1
        if n > MAX_INTEGER_VALUES:
            return None
        return [min(d.low + k * d.step, d.high) for k in range(n)]
    return None


class _Space:
    """The parameters of a search space as a session's variables: the float
    ones as its coordinates; with mixed, the discrete ones as its integer
    variables and the categorical ones as its categorical variables."""

    def __init__(self, search_space, mixed=False):
        self.int_names, self.int_values, self.int_lists = [], [], []
        self.cat_names, self.cat_choices = [], []
        floats = []
        for n in sorted(search_space):
            d = search_space[n]
            vals = _discrete_values(d) if mixed else None
            if vals is not None:
                self.int_names.append(n)
                self.int_values.append(vals)
                self.int_lists.append([math.log(v) for v in vals] if d.log else [float(v) for v in vals])
            elif mixed and isinstance(d, CategoricalDistribution):
                self.cat_names.append(n)
                self.cat_choices.append(list(d.choices))
            elif isinstance(d, FloatDistribution):
                floats.append(n)
        self.names = floats
        self.dists = [search_space[n] for n in self.names]
        self.lower, self.upper = [], []
        for d in self.dists:
            lo, up = (math.log(d.low), math.log(d.high)) if d.log else (d.low, d.high)
            self.lower.append(float(lo))
            self.upper.append(float(up))
        desc = [[n, d.low, d.high, bool(d.log), d.step] for n, d in zip(self.names, self.dists)]
        if self.mixed:  # a space without them keeps the key it had before
            desc.append(["int", [[n, search_space[n].low, search_space[n].high, bool(search_space[n].log),
                                  search_space[n].step] for n in self.int_names]])
            desc.append(["cat", [[n, len(ch)] for n, ch in zip(self.cat_names, self.cat_choices)]])
        self.key = hashlib.sha256(json.dumps(desc, default=repr).encode()).hexdigest()[:16]

    @property
    def mixed(self):
        """Whether the session has integer or categorical variables."""
        return bool(self.int_names or self.cat_names)

    def __len__(self):
        return len(self.names) + len(self.int_names) + len(self.cat_names)

    def params(self, x, z=None, c=None):
        """The parameter values of the session's point (x, z, c)."""
        out = {}
        for n, d, v in zip(self.names, self.dists, x):
            if d.log:
                v = math.exp(v)
            if d.step is not None:
                v = d.low + round((v - d.low) / d.step) * d.step
            out[n] = min(max(float(v), d.low), d.high)
        for n, vals, lst, v in zip(self.int_names, self.int_values, self.int_lists, z or []):
            k = min(range(len(lst)), key=lambda i: abs(lst[i] - v))  # v is one of lst's values
            out[n] = vals[k]
        for n, ch, k in zip(self.cat_names, self.cat_choices, c or []):
            out[n] = ch[int(k)]
        return out

    def point(self, params):
        """The session's point of parameter values (None if one is missing
        or outside its range)."""
        x = []
        for n, d, lo, up in zip(self.names, self.dists, self.lower, self.upper):
            if n not in params:
                return None
            v = float(params[n])
            if d.log:
                if v <= 0:
                    return None
                v = math.log(v)
            if not lo <= v <= up:
                return None
            x.append(v)
        return x


class SelfCmaSampler(BaseSampler):
    """An ``optuna.samplers.BaseSampler`` whose float parameters come from
    a CMA-ES or self-CMA-ES session of the selfcma service (see the module's
    documentation for how a study maps onto a session).

    Args:
        url_or_client: the server's URL, or a ``selfcma.Client``.
        algorithm: ``"self-cma-es"`` (None, the default: the server's default, at
            CMA-ES's population size, its first run adapting c1 and cmu by
            the signal-to-noise rule), ``"cma-es"`` or ``"sep-cma-es"``
            (C kept diagonal).
        use_separable_cma: Optuna's CmaEsSampler option: True selects
            ``"sep-cma-es"`` (give algorithm= or this, not both).
        sigma0: the initial step size in the coordinates (log space for a
            log parameter); default: the smallest range / 6, as Optuna's
            CmaEsSampler; for a mixed session, the factor of the C the
            server starts from the box (default MIXED_SIGMA0, 0.35;
            MIXED_CONSTRAINED_SIGMA0, 0.25, with constraints_func).
        seed: the session's seed (None: the server draws one) and the
            independent sampler's.
        population_size: λ; None for the server's default.
        token, cafile: as for ``selfcma.Client`` (with a URL; several
            URLs of servers that share a database fail over).
        restarts, termination: the session's (as for ``Client.create``):
            restarts is pycma's, the number of restarts the server makes
            within the session (IPOP), or the server's restarts object.
        CMA_active: pycma's option: True for active CMA-ES, False without;
            None: the server's default.
        bipop: pycma's: True makes the restarts BIPOP's (with restarts, or
            alone: the server's number of restarts).
        incpopsize: pycma's: the factor λ grows by at each restart (None:
            the server's, 2); needs restarts or bipop.
            The last three are sent only when given, so that a server
            without them sees the requests it saw before.
        lease: seconds a trial's candidate is leased for (default a
            minute); a running trial renews its lease every half lease, so
            that a trial may run longer, while the candidate of a trial
            whose process died goes to another trial within a lease.
        poll: seconds between claims while every candidate is taken.
        independent_sampler: for the other parameters (default
            RandomSampler(seed)).
        constraints_func: Optuna's: a function of a FrozenTrial returning
            its constraint values (feasible when all are ≤ 0); the session
            is then constrained and ranks by the augmented Lagrangian.
        mixed: True (default): integer, stepped float and categorical
            parameters are the session's integer and categorical variables
            (a CatCMA-with-margin session, which takes no restarts, bipop,
            incpopsize, CMA_active or injected points: they are left out
            for it); False: they go to the independent sampler, as before.
    """

    def __init__(
        self,
        url_or_client="http://127.0.0.1:8080",
        *,
        algorithm=None,
        sigma0=None,
        seed=None,
        population_size=None,
        token=None,
        cafile=None,
        restarts=None,
        termination=None,
        lease=60,
        poll=0.1,
        independent_sampler=None,
        CMA_active=None,
        bipop=False,
        incpopsize=None,
        use_separable_cma=False,
        constraints_func=None,
        mixed=True,
    ):
        if isinstance(url_or_client, Client):
            self._client = url_or_client
        else:
            self._client = Client(url_or_client, token=token, cafile=cafile)
        if use_separable_cma:
            if algorithm not in (None, "sep-cma-es"):
                raise ValueError(f"use_separable_cma=True with algorithm={algorithm!r}: give one of them")
            algorithm = "sep-cma-es"
        self._algorithm = algorithm or "self-cma-es"
        self._sigma0 = sigma0
        self._seed = seed
        self._population_size = population_size
        self._restarts = restarts
        if CMA_active is not None and not isinstance(CMA_active, bool):
            raise TypeError(f"CMA_active is {CMA_active!r}: want True or False")
        if incpopsize is not None and restarts is None and not bipop:
            raise ValueError(f"incpopsize={incpopsize!r} without restarts: give restarts= (or bipop=True) too")
        self._active = CMA_active
        self._bipop = bool(bipop)
        self._incpopsize = incpopsize
        self._termination = termination
        self._lease = int(lease)
        self._poll = float(poll)
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._search_space = IntersectionSearchSpace()
        self._lock = threading.Lock()
        self._sessions = {}  # session id -> Session
        self._warned = set()
        self._renewals = {}  # trial id -> threading.Event that stops its renewals
        self._constraints_func = constraints_func
        self._mixed = bool(mixed)

    @property
    def client(self):
        return self._client

    def reseed_rng(self):
        self._independent.reseed_rng()

    def infer_relative_search_space(self, study, trial):
        space = {}
        for name, d in self._search_space.calculate(study).items():
            if d.single():
                continue
            if not isinstance(d, FloatDistribution) and not (
                    self._mixed and (isinstance(d, CategoricalDistribution) or _discrete_values(d) is not None)):
                continue
            space[name] = d
        return space

    def sample_relative(self, study, trial, search_space):
        self._raise_error_if_multi_objective(study)
        space = _Space(search_space, self._mixed)
        if not len(space):
            return {}
        fixed = trial.system_attrs.get("fixed_params")
        if fixed:
            self._inject(study, trial, space, fixed)
            return {}
        worker = f"optuna-trial-{trial._trial_id}"
        swept = None
        while True:
            es = self._session(study, space)
            try:
                c = es.claim(self._lease, worker)
            except Stopped:
                self._restart(study, space, es)
                continue
            if c is not None:
                break
            # Every candidate is leased. A trial that ended without telling
            # (failed as stale by Optuna's heartbeat, or its process killed
            # after Optuna stored its state) holds one until its lease runs
            # out: tell what the finished trials hold, again (a value told
            # twice counts once).
            now = time.monotonic()
            if swept is None or now - swept >= SWEEP_INTERVAL:
                swept = now
                self._tell_finished(study, es)
            time.sleep(self._poll)
        study._storage.set_trial_system_attr(
            trial._trial_id, CLAIM_ATTR, {"session": es.id, "generation": c.generation, "index": c.index}
        )
        self._keep_lease(study, trial._trial_id, es, c, worker)
        return space.params(c.x, c.z, c.c)

    def _keep_lease(self, study, trial_id, es, claim, worker):
        """Renews the trial's lease every half lease while the trial runs
        (until after_trial, or until Optuna no longer holds it running: a
        trial its heartbeat failed)."""
        stop = threading.Event()
        with self._lock:
            self._renewals[trial_id] = stop

        def renew():
            while not stop.wait(self._lease / 2):
                try:
                    if study._storage.get_trial(trial_id).state != TrialState.RUNNING:
                        return
                    es.renew(claim, self._lease, worker)
                except Exception:  # the trial's tell will say what is wrong
                    return

        threading.Thread(target=renew, name="selfcma-lease", daemon=True).start()

    def sample_independent(self, study, trial, param_name, param_distribution):
        self._raise_error_if_multi_objective(study)
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values):
        with self._lock:
            stop = self._renewals.pop(trial._trial_id, None)
        if stop is not None:
            stop.set()
        if self._constraints_func is not None:
            if _process_constraints_after_trial is not None:
                _process_constraints_after_trial(self._constraints_func, study, trial, state)
            elif state in (TrialState.COMPLETE, TrialState.PRUNED):
                study._storage.set_trial_system_attr(trial._trial_id, _CONSTRAINTS_KEY,
                                                     tuple(self._constraints_func(trial)))
        claim = trial.system_attrs.get(CLAIM_ATTR)
        if claim is not None:
            self._tell(study, trial, claim, state, values)
        self._independent.after_trial(study, trial, state, values)

    def _tell(self, study, trial, claim, state, values):
        """Tells the value of the trial's claimed candidate: its value
        (negated when maximizing) if it completed, else None."""
        v = None
        if state == TrialState.COMPLETE and values:
            v = float(values[0])
            if study.direction == StudyDirection.MAXIMIZE:
                v = -v
            if v == -math.inf:
                v = _MOST_NEGATIVE
        try:
            es = self._attach(claim["session"])
            kw = {}
            if es.constraints:  # a constrained session: the trial's values, None when unknown
                g = self._trial_constraints(study, trial) if v is not None else None
                kw["constraints_values"] = [None] if g is None else list(g)
            return es.tell_claim(Claim(claim["generation"], claim["index"], [], ""), v, **kw)
        except Stopped:
            log.debug("selfcma: trial %d: session %s has stopped; value not told", trial.number, claim["session"])
        except Conflict as e:
            log.warning("selfcma: trial %d: its value was not taken: %s", trial.number, e.message)
        except OutOfRange as e:
            log.warning("selfcma: trial %d: its values were refused: %s", trial.number, e.message)
        return False

    @staticmethod
    def _trial_constraints(study, trial):
        """The constraint values stored on the trial (after_trial stores
        them before telling), None if none."""
        g = trial.system_attrs.get(_CONSTRAINTS_KEY)
        if g is None:
            g = study._storage.get_trial(trial._trial_id).system_attrs.get(_CONSTRAINTS_KEY)
        return g

    def _constraint_count(self, study):
        """m of the study's constraints (0 without constraints_func): the
        number of values stored on a completed trial, else of the function's
        values for one."""
        if self._constraints_func is None:
            return 0
        done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        for t in done:
            g = t.system_attrs.get(_CONSTRAINTS_KEY)
            if g is not None:
                return len(g)
        if not done:
            raise RuntimeError("selfcma: the number of constraints is known once a trial has completed")
        return len(self._constraints_func(done[0]))

    def _tell_finished(self, study, es):
        """Tells again the values of the finished trials that claimed
        candidates of the session's pending generation."""
        es.refresh()
        g = es.generation
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)):
            claim = t.system_attrs.get(CLAIM_ATTR)
            if claim is None or claim["session"] != es.id or claim["generation"] != g:
                continue
            values = t.values if t.state == TrialState.COMPLETE else None
            if self._tell(study, t, claim, t.state, values):
                return  # the generation is complete: claims will succeed

    # The study's session.

    def _attach(self, session_id):
        with self._lock:
            es = self._sessions.get(session_id)
        if es is None:
            es = self._client.session(session_id)
            with self._lock:
                es = self._sessions.setdefault(session_id, es)
        return es

    def _session_key(self, study, space):
        """The study attribute of the session of this search space (and
        number of constraints)."""
        m = self._constraint_count(study)
        return SESSION_ATTR + space.key + (f"-c{m}" if m else "")

    def _session(self, study, space):
        """The study's session of this search space: found in the study's
        system attributes, or created (once, whichever worker comes first)."""
        key = self._session_key(study, space)
        for _ in range(50):
            attr = study._storage.get_study_system_attrs(study._study_id).get(key)
            if attr is not None:
                return self._attach(attr["id"])
            try:
                es = self._create(study, space, restarts=0, x0=None)
            except OutOfRange as e:
                if "Idempotency-Key" not in e.message:
                    raise  # the body itself is refused: retrying cannot help
                # Another worker made it with another body (another seed):
                # its attribute appears shortly.
                time.sleep(self._poll)
                continue
            study._storage.set_study_system_attr(study._study_id, key, {"id": es.id, "restarts": 0})
            with self._lock:
                self._sessions.setdefault(es.id, es)
            return es
        raise RuntimeError(f"selfcma: no session for study {study.study_name!r} after 50 tries")

    def _create(self, study, space, restarts, x0):
        lower, upper = space.lower, space.upper
        if x0 is None:
            x0 = [(lo + up) / 2 for lo, up in zip(lower, upper)]
        kw = {}
        if self._population_size is not None:
            kw["population_size"] = self._population_size
        if self._termination is not None:
            kw["termination"] = self._termination
        m = self._constraint_count(study)
        if m:
            kw["constraints"] = m
        meta = {"study": study.study_name, "params": space.names, "restart": restarts}
        if space.mixed:
            # CatCMA with margin: C starts from the box (half-width/6 per
            # continuous coordinate, /5 per integer one), σ0 MIXED_SIGMA0
            # (MIXED_CONSTRAINED_SIGMA0 with constraints) unless sigma0 was
            # given.
            self._warn_mixed_options()
            sigma0 = self._sigma0
            if sigma0 is None:
                sigma0 = MIXED_CONSTRAINED_SIGMA0 if m else MIXED_SIGMA0
            kw.update(algorithm="catcma", integers=space.int_lists, categories=[len(ch) for ch in space.cat_choices])
            meta.update(integers=space.int_names, categories=space.cat_names)
        else:
            sigma0 = self._sigma0
            if sigma0 is None:
                sigma0 = min(up - lo for lo, up in zip(lower, upper)) / 6
            kw["algorithm"] = self._algorithm
            if self._restarts is not None:
                kw["restarts"] = self._restarts
            if self._bipop:
                kw["bipop"] = True
            if self._incpopsize is not None:
                kw["incpopsize"] = self._incpopsize
            if self._active is not None:
                kw["active"] = self._active
        seed = None if self._seed is None else (self._seed + restarts) % 2**64
        return self._client.create(
            x0,
            sigma0,
            seed=seed,
            bounds={"lower": lower, "upper": upper},
            name=f"optuna {study.study_name}"[:256],
            metadata={"optuna": meta},
            idempotency_key=self._idempotency_key(study, space, restarts),
            **kw,
        )

    def _warn_mixed_options(self):
        """Warns once of the options a mixed session leaves out."""
        dropped = [k for k, v in (("restarts", self._restarts), ("bipop", self._bipop or None),
                                  ("incpopsize", self._incpopsize), ("CMA_active", self._active)) if v is not None]
        if dropped and "mixed-options" not in self._warned:
            self._warned.add("mixed-options")
            log.warning("selfcma: %s do not apply to a mixed session (CatCMA with margin); left out", ", ".join(dropped))

    def _idempotency_key(self, study, space, restarts):
        """The same for every worker of the study: its name, the search
        space, the restart, and when its first trial started (which tells
        two studies of one name in different storages apart)."""
        first = None
        for t in study.get_trials(deepcopy=False):
            if t.number == 0:
                first = t.datetime_start
                break
        stamp = first.isoformat() if first is not None else ""
        h = hashlib.sha256(f"{study.study_name}\x00{stamp}".encode()).hexdigest()[:24]
        m = self._constraint_count(study)
        return f"optuna-{h}-{space.key}{f'-c{m}' if m else ''}-{restarts}"

    def _restart(self, study, space, stopped):
        """Replaces the study's stopped session by a new one from its best
        point (once, whichever worker comes first)."""
        key = self._session_key(study, space)
        attr = study._storage.get_study_system_attrs(study._study_id).get(key)
        if attr is None or attr["id"] != stopped.id:
            return  # another worker restarted it
        stopped.refresh()
        k = attr.get("restarts", 0) + 1
        best = (stopped.info.get("best") or {}).get("x")
        x0 = best if best is not None and all(v is not None for v in best) else None
        log.info("selfcma: study %s: session %s stopped (%s); restart %d",
                 study.study_name, stopped.id, dict(stopped.stop()), k)
        es = self._create(study, space, restarts=k, x0=x0)
        study._storage.set_study_system_attr(study._study_id, key, {"id": es.id, "restarts": k})

    def _inject(self, study, trial, space, fixed):
        if space.mixed:
            return  # a mixed session takes no injected points
        x = space.point(fixed)
        if x is None:
            return  # not every float parameter fixed (or one out of range): nothing to inject
        es = self._session(study, space)
        try:
            g = es.inject([x])
        except Stopped:
            return
        except NotFound as e:
            if "inject" not in self._warned:
                self._warned.add("inject")
                log.warning("selfcma: the server cannot inject points (%s); enqueued trials are evaluated only "
                            "as Optuna fixes them", e.message)
            return
        except SelfCMAError as e:
            log.warning("selfcma: trial %d: its point was not injected: %s", trial.number, e)
            return
        study._storage.set_trial_system_attr(trial._trial_id, INJECT_ATTR, {"session": es.id, "generation": g})
