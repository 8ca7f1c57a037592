"""selfcma: the Python client of the selfcma ask/tell optimization service.

The server runs CMA-ES or self-CMA-ES and persists every generation; this
client, standard library only, drives a session like pycma's ask/tell, so an
expensive objective (a simulator) can be evaluated anywhere, in parallel, and
a run resumed from its session id after any crash of the client or the
server.

A loop that runs as written against a server (``go run ./cmd/server``; set
SELFCMA_URL to point elsewhere)::

    import os
    from selfcma import Client

    def ellipsoid(x):
        n = len(x)
        return sum(10 ** (6 * i / (n - 1)) * v * v for i, v in enumerate(x))

    client = Client(os.environ.get("SELFCMA_URL", "http://127.0.0.1:8080"))
    es = client.create([1.0] * 5, 0.5, seed=1, termination={"target_fitness": 1e-8})
    print("session", es.id)          # client.session(es.id) resumes it anywhere
    while not es.stop():             # {} while running, else {criterion: value}
        X = es.ask()                 # λ points, a list of lists of floats
        es.tell(X, [ellipsoid(x) for x in X])   # None for a failed evaluation
    print(es.result.fbest, es.stop(), es.hyperparameters["c1"])

    # The same in one call, with 4 evaluations at a time:
    es = client.optimize(ellipsoid, [1.0] * 5, 0.5, workers=4,
                         termination={"target_fitness": 1e-8})

    # pycma's options dict and cma.fmin2 (numpy arrays in give numpy out):
    xbest, es = client.fmin2(ellipsoid, [1.0] * 5, 0.5,
                             {"popsize": 12, "seed": 2, "ftarget": 1e-8, "verbose": -9},
                             algorithm="cma-es")
    print(xbest, es.result.evals_best, es.result.iterations)

``selfcma.optuna.SelfCmaSampler`` (with Optuna installed) runs an Optuna
study's CMA-ES in the service.

Errors are SelfCMAError subclasses keyed on the server's codes
(``selfcma.errors``): InvalidRequest (a ValueError) and its OutOfRange and
TooLarge, Unauthorized, NotFound (a LookupError), Conflict and its Stopped,
ServerError and its ServerUnavailable (a ConnectionError, raised when the
bounded retries are used up).
"""

from . import errors
from .client import Client
from .errors import (
    Conflict,
    EvaluationError,
    InvalidRequest,
    NotFound,
    OutOfRange,
    SelfCMAError,
    ServerError,
    ServerUnavailable,
    StorageFull,
    Stopped,
    Throttled,
    TooLarge,
    Unauthorized,
    Unsupported,
)
from .mixed import MixedPoint
from .result import Claim, Result
from .session import Session

__version__ = "0.1.0"

# The error classes are errors.__all__ but its function error_from_answer.
__all__ = ["Client", "Session", "Result", "Claim", "MixedPoint"] + [
    name for name in errors.__all__ if name != "error_from_answer"
]
