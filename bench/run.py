"""Running cases: the public entry points of the harness."""

from privbench.bench.runner import failure_rows, provenance, run_cases, score_budget

__all__ = ["failure_rows", "provenance", "run_cases", "score_budget"]
