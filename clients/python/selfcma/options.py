"""pycma's options (``CMAOptions`` names) in terms of the service.

``Client.create(x0, sigma0, {'popsize': 20, 'seed': 3, 'ftarget': 1e-8})``
takes the options a pycma script passes to ``CMAEvolutionStrategy``, with
pycma's names and meanings, where the service has the same thing. An option
without a counterpart here raises ValueError listing those supported, rather
than being ignored; only pycma's options of logging and display (``IGNORED``,
the ``verb_*`` family: the service keeps the history itself) are accepted
and ignored, with one warning.
"""

from __future__ import annotations

import math

from . import _convert as conv

__all__ = ["SUPPORTED", "IGNORED", "to_create", "ignored", "restarts_body", "UNBOUNDED"]

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
    "CMA_active": "True: active CMA-ES (negative weights in the update of C, the service's active); "
                  "False: without; absent: the server's default",
    "CMA_diagonal": "True: sep-CMA-ES, C kept diagonal (the service's algorithm \"sep-cma-es\", "
                    "for n up to 10^5); False or absent: a full C. pycma's number of diagonal "
                    "iterations before a full C is not supported",
}

# pycma's options of logging and display that have no use here: accepted
# and ignored (with one warning). The server keeps every generation's
# record (Session.history) and draws them (the session's page,
# es.logger.plot()); verb_disp and verbose are honoured (SUPPORTED).
IGNORED = (
    "verb_append",
    "verb_disp_overwrite",
    "verb_filenameprefix",
    "verb_log",
    "verb_log_expensive",
    "verb_plot",
    "verb_time",
)


def ignored(inopts):
    """The options of inopts that are accepted and ignored (IGNORED), in
    order."""
    if not isinstance(inopts, dict):
        return []
    return sorted(k for k in inopts if k in IGNORED)


def _flag(v, name):
    """A pycma boolean option: a bool, 0 or 1, or the strings 'True' and
    'False' (pycma evaluates string options)."""
    v = conv.plain(v)
    if isinstance(v, str):
        t = v.split("#")[0].strip()
        if t in ("True", "1"):
            return True
        if t in ("False", "0"):
            return False
        raise ValueError(f"{name} is {v!r}: want True or False")
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, float) and v in (0.0, 1.0):
        return bool(v)
    raise TypeError(f"{name} is {v!r}: want True or False")


def _diagonal(v):
    """pycma's CMA_diagonal as a bool: True (or 1, or pycma's 'True')
    selects sep-CMA-ES, False (or 0) a full C. pycma's other values, a
    number of iterations after which C becomes full, have no counterpart."""
    try:
        return _flag(v, "options['CMA_diagonal']")
    except (TypeError, ValueError):
        raise ValueError(
            f"options['CMA_diagonal'] is {v!r}: selfcma runs sep-CMA-ES for the whole run (True) "
            "or a full C (False); pycma's diagonal phase of some iterations is not supported"
        ) from None


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
    unknown = sorted(k for k in inopts if k not in SUPPORTED and k not in IGNORED)
    if unknown:
        listing = "\n".join(f"  {k}: {v}" for k, v in SUPPORTED.items())
        raise ValueError(
            f"option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"ha{'ve' if len(unknown) > 1 else 's'} no counterpart in selfcma; the pycma options it supports:\n{listing}"
            f"\nand, accepted and ignored: {', '.join(IGNORED)}"
        )
    body, term, local = {}, {}, {}
    o = inopts
    if o.get("popsize") is not None:
        body["population_size"] = conv.integer(o["popsize"], "options['popsize']")
    if o.get("CMA_active") is not None:
        body["active"] = _flag(o["CMA_active"], "options['CMA_active']")
    if o.get("CMA_diagonal") is not None:
        if _diagonal(o["CMA_diagonal"]):
            body["algorithm"] = "sep-cma-es"
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


RESTART_STRATEGIES = ("none", "ipop", "bipop", "nipop", "nbipop")

# bipop=True on top of a strategy: IPOP becomes BIPOP, Loshchilov's NIPOP
# his NBIPOP (pycma has neither: the server's names).
_BIPOP_OF = {"ipop": "bipop", "bipop": "bipop", "nipop": "nbipop", "nbipop": "nbipop"}


def restarts_body(restarts, bipop, incpopsize, n):
    """The create body's "restarts" object for pycma's restarts, bipop and
    incpopsize (None when none is asked for: the server's default): restarts
    an int k (k restarts: {"strategy": "ipop" or "bipop", "max": k}; 0: no
    restart, {"max": 0}), a strategy's
    name (RESTART_STRATEGIES: "nipop" and "nbipop" are Loshchilov's, not
    pycma's), or the server's object itself; bipop True selects "bipop"
    ("nbipop" with "nipop" or "nbipop");
    incpopsize other than 2 is sent as "incpopsize". A region given as
    pycma's bounds [lower, upper] becomes {"lower": [...], "upper": [...]}.
    Only the fields asked for are sent."""
    if bipop is not None and not isinstance(bipop, bool):
        b = conv.plain(bipop)
        if not isinstance(b, (bool, int)) or isinstance(b, int) and b not in (0, 1):
            raise TypeError(f"bipop is {bipop!r}: want True or False")
        bipop = bool(b)
    if restarts is None:
        if not bipop:
            if incpopsize is not None:
                raise ValueError(f"incpopsize={incpopsize!r} without restarts: give restarts= (or bipop=True) too")
            return None
        r = {}
    elif isinstance(restarts, str):
        if restarts not in RESTART_STRATEGIES:
            raise ValueError(f"restarts {restarts!r}: want one of {', '.join(RESTART_STRATEGIES)}, or a number")
        r = {"strategy": restarts}
    elif isinstance(restarts, dict):
        r = conv.plain_json(restarts)
        region = r.get("region")
        if region is not None:
            r["region"] = conv.bounds(region, n)
    else:
        k = conv.integer(restarts, "restarts")
        if k < 0:
            raise ValueError(f"restarts is {k}: want the number of restarts, ≥ 0")
        if k == 0:
            # pycma's restarts=0: one run, whatever bipop and incpopsize
            # say (the server: max 0 without a strategy is none).
            return {"max": 0}
        r = {"strategy": "ipop", "max": k}
    if bipop:
        strategy = _BIPOP_OF.get(r.get("strategy", "ipop"))
        if strategy is None:
            raise ValueError(f"bipop=True with restarts {restarts!r}: BIPOP is a restart strategy of its own")
        r["strategy"] = strategy
    if incpopsize is not None:
        f = conv.number(incpopsize, "incpopsize")
        if "incpopsize" in r and r["incpopsize"] != f:
            raise ValueError("incpopsize given both in restarts and as incpopsize=")
        if f != 2:
            r["incpopsize"] = f
    return r
