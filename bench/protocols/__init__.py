"""Non-standard experiment protocols, run instead of fit-then-evaluate.

:func:`run_protocol` is what :func:`privbench.bench.execute.execute_case` calls
for a :class:`~privbench.bench.suites.Case` whose ``protocol`` is not None.  It
returns one :class:`~privbench.bench.records.Record` per budget and never
raises for a failing case (Records with ``status="failed"`` and the error).

A protocol is one module here that defines ``run_<name>(case, device, artifacts)`` and is
listed in :data:`PROTOCOLS` under its name (the names a suite may use are
``privbench.datasets.vocabulary.PROTOCOLS``; a test checks the two agree).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..records import Record, failure_rows, now
from .two_user import check_two_user, run_two_user, train_classifier

#: Protocol name -> its runner.
PROTOCOLS: dict[str, Callable[[Any, str, Any], list[Record]]] = {"two-user": run_two_user}
PROTOCOL_NAMES = tuple(PROTOCOLS)

__all__ = ["PROTOCOLS", "PROTOCOL_NAMES", "check_two_user", "run_protocol", "run_two_user", "train_classifier"]


def run_protocol(case: Any, device: str = "auto", artifacts: Any = None) -> list[Record]:
    """Run ``case`` under its ``protocol``; one Record per budget (never raises for a failing case).

    Parameters
    ----------
    case : Case
        ``case.protocol`` names the protocol (a key of :data:`PROTOCOLS`).
    device : {"auto", "cpu", "cuda"}
        Where the learner trains.
    artifacts : path or None
        Where the fitted mechanisms are kept with the results (a temporary directory when None).

    Returns
    -------
    list of Record
        One per budget of ``case``, with the columns of :func:`~privbench.bench.execute.execute_case`'s.
    """
    runner = PROTOCOLS.get(case.protocol)
    if runner is not None:
        return runner(case, device, artifacts)
    started, t0 = now(), time.perf_counter()
    msg = f"protocol={case.protocol!r} is unknown (allowed: {', '.join(PROTOCOL_NAMES)})"
    return failure_rows(case, "failed", "protocol: InputError: " + msg, started, time.perf_counter() - t0,
                        str(device))
