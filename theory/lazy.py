"""``cvxpy``, imported on first use: most of theory never reaches a conic solver.

Every module of ``privbench.theory`` is imported when the provider registry loads (theory/registry.py),
and so is every module that imports theory (the CLI, each evaluator process, each worker).  Importing
cvxpy costs about 0.7 s of CPU; the programs that need it (the finite programs' fallback, the mixture
sandwich's grids, the paper's conic references) are rare in a run, since the fast solvers and the
stored tables answer first.  ``cp.Variable`` etc. resolve through :class:`LazyModule` on first use.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """A stand-in for the module ``name`` that imports it when an attribute is first asked for."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self.name!r}>"


cvxpy = LazyModule("cvxpy")
