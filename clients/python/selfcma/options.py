"""pycma's options (``CMAOptions`` names) in terms of the service.

``Client.create(x0, sigma0, {'popsize': 20, 'seed': 3, 'ftarget': 1e-8})``
takes the options a pycma script passes to ``CMAEvolutionStrategy``, with
pycma's names and meanings, where the service has the same thing. An option
without a counterpart here raises ValueError listing those supported, rather
than being ignored.
"""

from __future__ import annotations

import math

from . import _convert as conv

__all__ = ["SUPPORTED", "to_create", "UNBOUNDED"]

# A side of a box pycma leaves open (None): the service takes finite bounds
# only, and its transformation (pycma's) is the identity on every |x| below
# about 0.9·UNBOUNDED, so a bound this far changes no candidate.
UNBOUNDED = 1e300

# pycma name -> what it does here.
SUPPORTED = {
    "popsize": "λ, the population size (the service's population_size)",
    "seed": "the seed of the run; None or 0 lets the server draw one (pycma: 'time')",
    "bounds": "[lower, upper], each None, a number or a list of n numbers (None: unbounded)",
    "maxfevals": "stop after this many evaluations (termination.max_evaluations)",
    "maxiter": "stop after this many iterations (generations); checked by the client",
    "ftarget": "stop once a value ≤ ftarget is told (termination.target_fitness)",
    "tolfun": "tolerance in function values (termination.tol_fun; 0 disables)",
    "tolx": "tolerance in x-changes (termination.tol_x; 0 disables)",
    "tolconditioncov": "stop when the condition of C exceeds it (termination.condition_cov)",
    "tolupsigma": "stop when σ/σ0 exceeds it times √λ_max(C) (termination.tol_up_sigma)",
    "verb_disp": "fmin2 and optimize print a line every verb_disp iterations (0: none)",
    "verbose": "fmin2 prints result_pretty() at the end when verbose ≥ 1 (default 3), nothing when < 0",
}


def _inf_to_none(v, name):
    """pycma writes 'no limit' as inf (or None)."""
    if v is None:
        return None
    f = conv.number_or_inf(v, name)
    return None if math.isinf(f) else f


def to_create(inopts, n):
    """(body, local): the create body's fields for pycma options inopts (a
    dict) of an n-dimensional problem, and the options the client applies
    itself (maxiter, verb_disp, verbose)."""
    if inopts is None:
        return {}, {}
    if not isinstance(inopts, dict):
        raise TypeError(f"options are {type(inopts).__name__}, want a dict of pycma's options (CMAOptions names)")
    unknown = sorted(k for k in inopts if k not in SUPPORTED)
    if unknown:
        listing = "\n".join(f"  {k}: {v}" for k, v in SUPPORTED.items())
        raise ValueError(
            f"option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"ha{'ve' if len(unknown) > 1 else 's'} no counterpart in selfcma; the pycma options it supports:\n{listing}"
        )
    body, term, local = {}, {}, {}
    o = inopts
    if o.get("popsize") is not None:
        body["population_size"] = conv.integer(o["popsize"], "options['popsize']")
    if o.get("seed") not in (None, 0):
        s = o["seed"]
        if isinstance(s, str):
            raise ValueError(f"options['seed'] is {s!r}: want an integer, or None for a seed the server draws")
        body["seed"] = conv.integer(s, "options['seed']")
    if "bounds" in o:
        b = bounds(o["bounds"], n)
        if b is not None:
            body["bounds"] = b
    v = _inf_to_none(o.get("maxfevals"), "options['maxfevals']")
    if v is not None:
        if v < 1 or not float(v).is_integer():
            raise ValueError(f"options['maxfevals'] is {o['maxfevals']!r}: want a positive integer or inf")
        term["max_evaluations"] = int(v)
    v = _inf_to_none(o.get("maxiter"), "options['maxiter']")
    if v is not None:
        if v < 1 or not float(v).is_integer():
            raise ValueError(f"options['maxiter'] is {o['maxiter']!r}: want a positive integer or inf")
        local["maxiter"] = int(v)
    if o.get("ftarget") is not None:
        f = conv.number_or_inf(o["ftarget"], "options['ftarget']")
        if f != -math.inf:  # pycma's default: no target
            if math.isinf(f):
                raise ValueError("options['ftarget'] is inf: want a finite number or -inf")
            term["target_fitness"] = f
    for name, field in (("tolfun", "tol_fun"), ("tolx", "tol_x"), ("tolconditioncov", "condition_cov"),
                        ("tolupsigma", "tol_up_sigma")):
        if o.get(name) is not None:
            f = conv.number_or_inf(o[name], f"options[{name!r}]")
            if f < 0:
                raise ValueError(f"options[{name!r}] is {f}: want ≥ 0 (0 disables it)")
            term[field] = 0.0 if math.isinf(f) else f  # inf: never fires, as 0 (disabled) here
    for name in ("verb_disp", "verbose"):
        if o.get(name) is not None:
            local[name] = conv.integer(o[name], f"options[{name!r}]")
    if term:
        body["termination"] = term
    return body, local


def bounds(b, n):
    """pycma's bounds [lower, upper] (each None, a number or n values that
    may be None) as the service's {"lower": [...], "upper": [...]}, None for
    no bounds at all; a side left open is ±UNBOUNDED. A dict
    {"lower": ..., "upper": ...} is taken as the service's."""
    if b is None:
        return None
    if isinstance(b, dict):
        return conv.bounds(b, n)
    b = conv.plain(b)
    try:
        lower, upper = b
    except (TypeError, ValueError):
        raise ValueError(f"bounds {b!r}: want [lower, upper] (pycma's) or {{'lower': ..., 'upper': ...}}") from None

    def side(v, name):
        v = conv.plain(v)
        if v is None:
            return [None] * n
        if isinstance(v, (list, tuple)):
            if len(v) == 1:  # pycma repeats a one-element list
                v = v * n
            if len(v) != n:
                raise ValueError(f"{name} has {len(v)} values, want {n}")
            return [None if x is None else _bound(x, f"{name}[{i}]") for i, x in enumerate(v)]
        return [_bound(v, name)] * n

    lo, up = side(lower, "bounds lower"), side(upper, "bounds upper")
    if all(v is None for v in lo + up):
        return None
    return {
        "lower": [-UNBOUNDED if v is None else v for v in lo],
        "upper": [UNBOUNDED if v is None else v for v in up],
    }


def _bound(v, name):
    f = conv.number_or_inf(v, name)
    return None if math.isinf(f) else f
