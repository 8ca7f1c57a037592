"""Conversion of the caller's values (lists, tuples, numpy arrays and
scalars) to the plain JSON values the server takes, and checks that fail in
the caller's terms before a request is sent."""

from __future__ import annotations

import math
import numbers


def _plain(v):
    """v.tolist() for arrays, v itself otherwise."""
    tolist = getattr(v, "tolist", None)
    if callable(tolist):
        return tolist()
    return v


plain = _plain


def uses_numpy(v):
    """Whether v is a numpy array (or a numpy scalar, or a sequence of
    arrays): the caller works with numpy, so what comes back should be numpy
    arrays too."""
    mod = type(v).__module__ or ""
    if mod == "numpy" or mod.startswith("numpy."):
        return True
    if isinstance(v, (list, tuple)) and v:
        return uses_numpy(v[0])
    return False


def numpy_module():
    """numpy, imported only when a caller has used it."""
    import numpy

    return numpy


def storable(v):
    """plain_json(v) with ±inf written "inf" and "-inf" (JSON has no
    infinity; pycma's options take these strings)."""
    v = plain_json(v)
    if isinstance(v, dict):
        return {k: storable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [storable(x) for x in v]
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def number_or_inf(v, name):
    """v as a float that may be ±inf (not NaN); "inf" and "-inf" are taken
    as pycma takes them. TypeError naming it when it is not a number."""
    v = _plain(v)
    if isinstance(v, str) and v.strip() in ("inf", "-inf", "+inf", "np.inf", "-np.inf"):
        return float(v.strip().replace("np.", ""))
    if isinstance(v, (str, bytes)) or isinstance(v, bool):
        raise TypeError(f"{name} is {v!r}, want a number")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} is {v!r}, want a number") from None
    if math.isnan(f):
        raise ValueError(f"{name} is NaN, want a number")
    return f


def json_default(o):
    """json.dumps's default=: numpy arrays and scalars as plain values."""
    v = _plain(o)
    if v is not o:
        return v
    if isinstance(o, numbers.Integral):
        return int(o)
    if isinstance(o, numbers.Real):
        return float(o)
    if isinstance(o, (tuple, set, frozenset)):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


def number(v, name):
    """v as a finite float; ValueError naming it otherwise."""
    v = _plain(v)
    if isinstance(v, (str, bytes)) or isinstance(v, bool):
        raise TypeError(f"{name} is {v!r}, want a number")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} is {v!r}, want a number") from None
    if not math.isfinite(f):
        raise ValueError(f"{name} is {f}, want a finite number")
    return f


def integer(v, name):
    """v as an int (numpy integers too); TypeError otherwise."""
    v = _plain(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        raise TypeError(f"{name} is {v!r}, want an integer")
    return int(v)


def vector(x, name, n=None):
    """x (a sequence or an array of numbers) as a list of finite floats."""
    x = _plain(x)
    if isinstance(x, (str, bytes)) or not hasattr(x, "__len__") or not hasattr(x, "__iter__"):
        raise TypeError(f"{name} is {type(x).__name__}, want a sequence of numbers")
    out = [number(v, f"{name}[{i}]") for i, v in enumerate(x)]
    if n is not None and len(out) != n:
        raise ValueError(f"{name} has {len(out)} values, want {n}")
    return out


def matrix(X, name="X"):
    """X (a sequence of points, or a 2-D array) as a list of lists of floats."""
    X = _plain(X)
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
        raise TypeError(f"{name} is {type(X).__name__}, want a sequence of points")
    return [vector(x, f"{name}[{i}]") for i, x in enumerate(X)]


def fitness_value(v, name):
    """A fitness value as the server takes it: a float, or None for a failed
    evaluation. NaN and +inf are told as None (they rank worst, as None
    does); -inf cannot be told."""
    v = _plain(v)
    if v is None:
        return None
    if isinstance(v, (str, bytes)) or isinstance(v, bool):
        raise TypeError(f"{name} is {v!r}, want a number or None")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} is {v!r}, want a number or None") from None
    if math.isnan(f) or f == math.inf:
        return None
    if f == -math.inf:
        raise ValueError(f"{name} is -inf: tell a finite number (or None for a failed evaluation)")
    return f


def fitness(values, n=None):
    """The fitness values of a batch as a list of float or None."""
    values = _plain(values)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"fitness is {type(values).__name__}, want a sequence of numbers")
    out = [fitness_value(v, f"fitness[{i}]") for i, v in enumerate(values)]
    if n is not None and len(out) != n:
        raise ValueError(f"fitness has {len(out)} values, the batch has {n} points")
    return out


def constraint_values(G, n, name="constraints_values"):
    """The constraint values of n points (a sequence of rows, or a 2-D
    array) as a list of rows of float or None: None (or NaN) for an
    unknown value, a None row for a point whose values are all unknown.
    ±inf cannot be told."""
    G = _plain(G)
    if isinstance(G, (str, bytes)) or not hasattr(G, "__iter__"):
        raise TypeError(f"{name} is {type(G).__name__}, want a sequence of rows of numbers")
    out = []
    for k, row in enumerate(G):
        row = _plain(row)
        if row is None:
            out.append(None)
            continue
        if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
            row = [row]  # one constraint: a number per point
        vals = []
        for i, v in enumerate(row):
            v = _plain(v)
            if v is None:
                vals.append(None)
                continue
            if isinstance(v, (str, bytes, bool)):
                raise TypeError(f"{name}[{k}][{i}] is {v!r}, want a number or None")
            f = float(v)
            if math.isinf(f):
                raise ValueError(f"{name}[{k}][{i}] is {f}: tell a finite number (or None when unknown)")
            vals.append(None if math.isnan(f) else f)
        out.append(vals)
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} rows, want {n} (one per point)")
    return out


def bounds(b, n):
    """bounds as {"lower": [...], "upper": [...]}: a dict of that shape, or
    pycma's [lower, upper] where each is a number (the same for every
    coordinate) or a sequence of n numbers."""
    if b is None:
        return None
    if isinstance(b, dict):
        unknown = set(b) - {"lower", "upper"}
        if unknown or len(b) != 2:
            raise ValueError(f"bounds {b!r}: want keys lower and upper")
        lower, upper = b["lower"], b["upper"]
    else:
        b = _plain(b)
        try:
            lower, upper = b
        except (TypeError, ValueError):
            raise ValueError(f"bounds {b!r}: want [lower, upper] or {{'lower': ..., 'upper': ...}}") from None

    def side(v, name):
        v = _plain(v)
        if isinstance(v, numbers.Real) and not isinstance(v, bool):
            return [number(v, name)] * n
        return vector(v, name, n)

    return {"lower": side(lower, "bounds lower"), "upper": side(upper, "bounds upper")}


def plain_json(v):
    """A JSON-able copy of v: arrays and numpy scalars made plain, tuples
    made lists (for metadata and termination)."""
    v = _plain(v)
    if isinstance(v, dict):
        return {str(k): plain_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain_json(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    return v
