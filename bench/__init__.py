"""privbench.bench: the harness (CLI, and later runner, evaluators, store, reports)."""
