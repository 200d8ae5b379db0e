"""Third-party plug-in learners (``binary_only_plugin:BinaryOnly``) for the tests of ``Serves`` and skipping.

Not a test module: tests put this folder on the path and name the classes as ``module:Class``.
"""

from __future__ import annotations

from privbench.bench.plug_in import PlugIn
from privbench.learners import Serves


class BinaryOnly(PlugIn):
    """The plug-in learner, declared for binary S and binary U only."""

    name = "binary-only"
    summary = "plug-in restricted to binary finite tasks"
    serves = Serves(kinds=("finite",), n_s=2, n_u=2)


class UsefulOnly(BinaryOnly):
    """Refuses ``full`` observations through an overridden ``supports()`` (no declaration says so)."""

    name = "useful-only"

    def supports(self, task):
        return task.observation == "useful" and super().supports(task)


class OldStyle(PlugIn):
    """A plug-in written before ``Serves``: a tuple of task kinds."""

    name = "old-style"
    serves = ("finite",)


class ThreadReporter(PlugIn):
    """Fails on purpose, naming the torch thread count its worker process trains with."""

    name = "thread-reporter"

    def _fit(self, samples, task, budgets, seed, device):
        import torch

        raise RuntimeError(f"torch threads={torch.get_num_threads()}")


class EnvReporter(PlugIn):
    """Fails on purpose, naming the value of ``PRIVBENCH_TEST_ENV`` in its worker process."""

    name = "env-reporter"

    def _fit(self, samples, task, budgets, seed, device):
        import os

        raise RuntimeError(f"PRIVBENCH_TEST_ENV={os.environ.get('PRIVBENCH_TEST_ENV', '(unset)')} ")
