"""Mixed spaces (a session with ``integers`` and ``categories``, the
server's algorithm ``catcma``, CatCMA with margin): each candidate is a
MixedPoint of its continuous coordinates x, its integer values z (one value
of each list) and its 0-based categories c.

    es = client.create([2.0, 2.0], None, bounds=[-1, 5],
                       integers=[[0, 1, 2, 3], [0.01, 0.1, 1]], categories=[3, 5])
    while not es.stop():
        P = es.ask()                                   # MixedPoints
        es.tell(P, [f(p.x, p.z, p.c) for p in P])

Inside the Session a mixed point is flat, x + z + c, so that the batch,
claims and tells match points as they do for continuous sessions.
"""

from __future__ import annotations

from typing import Any, List, NamedTuple

from . import _convert as conv

__all__ = ["MixedPoint"]


class MixedPoint(NamedTuple):
    """A candidate of a mixed session.

    Attributes:
        x: the continuous coordinates (a numpy array when the session was
            made with numpy; empty without continuous coordinates).
        z: one value of each integer variable's list.
        c: the 0-based category of each categorical variable.
    """

    x: Any
    z: List[float]
    c: List[int]


def space_of(state):
    """(n_x, n_z, n_c) of a mixed session's state, None for another."""
    m = state.get("mixed")
    if not isinstance(m, dict):
        return None
    return m.get("continuous", 0), len(m.get("integers") or []), len(m.get("categories") or [])


def flat_batch(b):
    """A batch's candidates as flat points x + z + c (the candidates as they
    are for a batch without z)."""
    if b.get("z") is None:
        return b["candidates"]
    return [list(x) + list(z) + [float(k) for k in c] for x, z, c in zip(b["candidates"], b["z"], b["c"])]


def flat(p, name):
    """A MixedPoint (or an (x, z, c) triple) as the flat point x + z + c."""
    if not isinstance(p, (tuple, list)) or len(p) != 3:
        raise TypeError(f"{name} is {type(p).__name__}: a mixed session tells the MixedPoints ask returned")
    x, z, c = p
    return conv.vector(x, f"{name}.x") + conv.vector(z, f"{name}.z") + [float(conv.integer(k, f"{name}.c")) for k in c]


def split(v, space, out):
    """The flat point v as a MixedPoint (x through out)."""
    nx, nz, _ = space
    return MixedPoint(out(v[:nx]), list(v[nx:nx + nz]), [int(k) for k in v[nx + nz:]])


def create_body(body, integers, categories):
    """Adds integers and categories to a create's body."""
    if integers is not None:
        rows = conv._plain(integers)
        if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
            raise TypeError(f"integers is {type(integers).__name__}, want a list of lists of values")
        body["integers"] = [conv.vector(r, f"integers[{i}]") for i, r in enumerate(rows)]
    if categories is not None:
        body["categories"] = [conv.integer(k, f"categories[{i}]") for i, k in enumerate(conv._plain(categories))]
