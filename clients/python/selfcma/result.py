"""The values a session reports: Result (pycma's result tuple and more),
Claim, and the stop dict."""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional

__all__ = ["Result", "Claim", "BestSolution", "BestFeasible", "StopDict", "PYCMA_STOP_NAMES"]

# The server's name of each termination criterion, by the name pycma's
# CMAEvolutionStrategy.stop() gives the same criterion.
PYCMA_STOP_NAMES = {
    "maxfevals": "max_evaluations",
    "ftarget": "target_fitness",
    "tolfun": "tol_fun",
    "tolx": "tol_x",
    "tolconditioncov": "condition_cov",
    "tolupsigma": "tol_up_sigma",
    "noeffectaxis": "no_effect_axis",
    "noeffectcoord": "no_effect_coord",
    "tolstagnation": "stagnation",
    "tolflatfitness": "tol_flat_fitness",
}


class StopDict(dict):
    """{criterion: value} as the server names the criteria (``tol_fun``,
    ``target_fitness``, ...), that also answers pycma's names:
    ``'ftarget' in es.stop()`` and ``es.stop()['tolfun']`` work as with
    pycma. Empty (falsy) while the session runs."""

    def _key(self, k):
        if not dict.__contains__(self, k):
            k = PYCMA_STOP_NAMES.get(k, k)
            if k == "tol_flat_fitness" and not dict.__contains__(self, k):
                return "equal_fun_values"  # sessions before tol_flat_fitness
        return k

    def __contains__(self, k):
        return dict.__contains__(self, self._key(k))

    def __getitem__(self, k):
        return dict.__getitem__(self, self._key(k))

    def get(self, k, default=None):
        return dict.get(self, self._key(k), default)


class Result(NamedTuple):
    """The state of a session at a glance (``Session.result``): pycma's
    ``CMAEvolutionStrategyResult`` (the first eight fields, in its order, so
    ``es.result[0]`` is xbest as with pycma) and the service's own.

    Attributes:
        xbest: the best point told so far (None before the first number).
        fbest: its fitness value (None before the first number).
        evals_best: evaluations told when xbest was told (the end of its
            generation, as pycma counts).
        evaluations: values told so far (failed ones included).
        iterations: generations told so far (pycma's countiter).
        xfavorite: the mean of the distribution, mapped into the bounds as
            the candidates are: the best estimate of the optimum.
        stds: σ·√C_ii per coordinate (None from a server older than the
            field).
        stop: {criterion: value} once stopped, {} while running.
        best_generation: the generation that told xbest.
        generation: the pending generation (= iterations).
        mean: the mean of the search distribution, unmapped.
        sigma: the step size σ.
        status: ``"running"`` or ``"stopped"``.
        session_id: the session's id.

    With a numpy x0 (or ``Session(..., numpy=True)``), xbest, xfavorite,
    stds and mean are numpy arrays.
    """

    xbest: Optional[List[float]]
    fbest: Optional[float]
    evals_best: Optional[int]
    evaluations: int
    iterations: int
    xfavorite: List[Optional[float]]
    stds: Optional[List[float]]
    stop: Dict[str, Any]
    best_generation: Optional[int]
    generation: int
    mean: List[Optional[float]]
    sigma: Optional[float]
    status: str = "running"
    session_id: str = ""


class Claim(NamedTuple):
    """A candidate leased to this worker (``Session.claim``).

    Attributes:
        generation: the generation it is of.
        index: its index in the generation's batch.
        x: the point, a list of floats.
        expires_at: when the lease ends (RFC 3339); told later, the value
            is still taken unless another worker told the point first.
        worker: the id the lease is held under (the worker's, or the
            claim's Idempotency-Key for a claim without one): what
            ``Session.release`` names.
        z, c: a mixed session's integer values and categories of the
            point (None for another session).
    """

    generation: int
    index: int
    x: List[float]
    expires_at: str
    worker: Optional[str] = None
    z: Optional[List[float]] = None  # a mixed session's integer values
    c: Optional[List[int]] = None  # a mixed session's categories


class BestSolution(NamedTuple):
    """pycma's ``es.best``: the best point told so far.

    Attributes:
        x: the point (None before the first value; a numpy array when the
            session was made with numpy).
        f: its value (inf before the first value, as pycma's).
        evals: the evaluations told up to the end of its generation.
    """

    x: Any
    f: float
    evals: Optional[int]

    def get(self):
        """(x, f, evals), as pycma's BestSolution.get."""
        return self.x, self.f, self.evals


class BestFeasible(NamedTuple):
    """pycma's ``es.best_feasible`` of a constrained session: the best
    point told whose constraint values were all known and ≤ 0.

    Attributes:
        x: the point (None before any; a numpy array when the session was
            made with numpy).
        f: its value (inf before any, as pycma's).
        g: its m constraint values (None before any).
        evals: the evaluations told up to the end of its generation.
    """

    x: Any
    f: float
    g: Any
    evals: Optional[int]
