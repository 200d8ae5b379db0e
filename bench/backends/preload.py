"""What every local worker imports before its first case, imported once per run in the forkserver.

Where the platform has it, the local backend starts its workers from a ``multiprocessing`` forkserver
(:func:`privbench.bench.backends.local.worker_context`) that imports this module first: torch and its
compiler (``torch._dynamo``, which the first optimizer of a process imports), the built-in learners
(never an entry-point plug-in), theory, the evaluators and scikit-learn's neighbour search (KSG's
marginal counts, :func:`privbench.bench.evaluators.ksg.ball_counts`).  Each worker, and the evaluator it
forks, then starts with them done instead of importing them again (about 3.5 s of CPU per worker).
The forkserver runs no case and initialises no device (importing torch does not start CUDA): a worker
forked from it holds nothing of any training, as a spawned one does.
"""

from __future__ import annotations

import sklearn.neighbors  # noqa: F401
import torch
import torch._dynamo  # noqa: F401

import privbench.theory.optimum  # noqa: F401
from privbench.learners.registry import load_builtins

from .. import evaluators, scores  # noqa: F401
from . import local  # noqa: F401 - the workers' target

load_builtins()  # the built-in learners only (no entry points: no third-party code in the forkserver)
del torch
