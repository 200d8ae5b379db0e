"""Per-case reuse of evaluations: the budgets of one case whose saved mechanisms are the same release.

A case's budgets are evaluated on the same fresh samples (``Case.eval_seed`` does not depend on the
budget), so two budgets whose mechanisms have the same type and state (config and tensors, e.g. the
identity or the constant release, which ignore the budget) get the same evaluations, bit for bit.
:func:`reusing` wraps :func:`~privbench.bench.evaluators.evaluate` for one case: the first such
mechanism is evaluated (its self-description verified against fresh releases as always), the others
get a copy of its evaluations; the scoring at each budget (optimum, gap, overshoot, guarantee) still
runs per budget.  Only privbench's own mechanism types are reused (their release is a function of
their type and state, never of the budget); a third-party mechanism is always evaluated.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Callable


def state_digest(mech: Any) -> str | None:
    """A digest of a built-in mechanism's type and state (config and tensors; never its budget or
    info), or None for another object (a third-party mechanism: always evaluated)."""
    if not type(mech).__module__.startswith("privbench.learners.") or not hasattr(mech, "_state"):
        return None
    config, tensors = mech._state()
    h = hashlib.sha256(f"{type(mech).__module__}.{type(mech).__qualname__}".encode())
    h.update(json.dumps(config, sort_keys=True, default=repr).encode())
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def reusing(evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """``evaluate`` for the budgets of one case: a mechanism of the same type and state as one already
    evaluated with the same arguments gets a copy of its evaluations (module docstring)."""
    memo: dict[tuple[str, str], Any] = {}

    def run(mech: Any, *args: Any, **kwargs: Any) -> Any:
        digest = state_digest(mech)
        if digest is None:
            return evaluate(mech, *args, **kwargs)
        key = (digest, repr((args, sorted(kwargs.items()))))
        if key not in memo:
            memo[key] = evaluate(mech, *args, **kwargs)
        return copy.deepcopy(memo[key])

    return run
