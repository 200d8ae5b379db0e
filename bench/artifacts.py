"""Saved mechanisms, and their evaluation in a process of their own.

The bench scores what a user would ship: after ``fit``, every mechanism is
saved (:meth:`~privbench.learners.Mechanism.save`, kept with the results under
``mechanisms/``), and the evaluation loads that file in a separate process
(:func:`~privbench.learners.load_mechanism`, ``torch.load(weights_only=True)``),
an :class:`EvaluatorProcess` that never runs training code.  Whatever the
training process did to itself (module state, patched functions, the fitted
object and its references) cannot reach the evaluation: only the saved file
does.

The evaluator process (``python -m privbench.bench.artifact_eval``) is started
once per worker process and reused for its cases; a local or isolated worker forks
it before its first case, with its imports done and nothing trained
(:mod:`privbench.bench.forked_child`), elsewhere it is a fresh interpreter.  It imports the modules that
define the mechanisms' types (a plug-in's ``module:Class`` learner, or the
mechanism class's module) only in its release server (:mod:`privbench.learners.serve`), never itself: a
third-party mechanism is described to it as plain data by that server.  Requests and
replies are pickles over the child's stdin / a private copy of its stdout;
anything printed by the evaluated code goes to stderr.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

#: The directory of a results directory that keeps the saved mechanisms.
MECHANISMS_DIR = "mechanisms"


def save_mechanisms(mechs: list[Any], directory: str | os.PathLike, names: list[str] | None = None) -> list[Path | str]:
    """Save each mechanism to ``directory/budget-<i>.pt`` (or ``directory/names[i]``); per mechanism its
    path, or an error text.

    A mechanism whose class is not registered under its ``type_name`` (the
    :func:`~privbench.learners.base.mechanism_type` decorator) cannot be loaded
    in another process, so it is refused here with the reason.
    """
    from privbench.learners.base import MECHANISM_TYPES

    from .records import error_text

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out: list[Path | str] = []
    for i, mech in enumerate(mechs):
        cls = type(mech)
        if not cls.type_name or MECHANISM_TYPES.get(cls.type_name) is not cls:
            out.append(f"save: mechanism class {cls.__module__}.{cls.__qualname__} is not registered "
                       f"(type_name {cls.type_name!r}): decorate it with @mechanism_type('<name>') in an "
                       "importable module, so that its saved file can be loaded and evaluated")
            continue
        try:
            out.append(mech.save(d / (names[i] if names is not None else f"budget-{i}.pt")))
        except Exception as exc:  # noqa: BLE001 - a row error, the case goes on
            out.append("save: " + error_text(exc))
    return out


class EvaluatorProcess:
    """A long-lived ``python -m privbench.bench.artifact_eval`` child that scores saved mechanisms."""

    def __init__(self, threads: int, fork: Callable[[Any, Any], None] | None = None) -> None:
        if fork is not None:  # a copy of this process, which has imported what an evaluator needs, trained nothing
            from .forked_child import ForkedChild

            self.proc: Any = ForkedChild(fork)  # runs privbench.bench.artifact_eval.main
        else:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # same imports as here
            self.proc = subprocess.Popen([sys.executable, "-m", "privbench.bench.artifact_eval"], env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.threads = threads
        self.ready = False
        self.send((os.getpid(), threads))

    def wait_ready(self) -> None:
        """Block until the process has done its imports (RuntimeError if it died)."""
        if not self.ready:
            try:
                reply = pickle.load(self.proc.stdout)  # type: ignore[arg-type]
            except (EOFError, OSError, pickle.UnpicklingError):
                reply = None
            if reply != "ready":
                self.proc.kill()
                raise RuntimeError(f"the evaluation process did not start (exit code {self.proc.wait()})")
            self.ready = True

    def send(self, msg: Any) -> None:
        pickle.dump(msg, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)  # type: ignore[arg-type]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def request(self, msg: Any) -> Any:
        """Send one request; its reply (RuntimeError if the process died)."""
        self.wait_ready()
        try:
            self.send(msg)
            return pickle.load(self.proc.stdout)  # type: ignore[arg-type]
        except (EOFError, OSError, pickle.UnpicklingError):
            self.proc.kill()
            code = self.proc.wait()
            raise RuntimeError(f"the evaluation process died (exit code {code}; out of memory?)") from None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive():
            try:
                self.send(None)
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class EvaluatorPool:
    """This process's evaluator child, started on first use, replaced when it died or threads changed."""

    def __init__(self) -> None:
        self.proc: EvaluatorProcess | None = None
        atexit.register(self.close)

    def start(self, threads: int | None = None, fork: Callable[[Any, Any], None] | None = None) -> EvaluatorProcess:
        """The child for ``threads`` torch threads (default: this process's), started if needed; not waited for.

        ``fork``: :func:`privbench.bench.artifact_eval.main`, to fork the child from this process
        (:mod:`privbench.bench.forked_child`) instead of starting a fresh interpreter; only for a worker
        that has run nothing yet (:func:`~privbench.bench.backends.common.init_worker`).
        """
        if threads is None:
            import torch

            threads = torch.get_num_threads()
        if self.proc is None or not self.proc.alive() or self.proc.threads != threads:
            self.close()
            self.proc = EvaluatorProcess(threads, fork=fork)
        return self.proc

    def get(self) -> EvaluatorProcess:
        """The child for this process's torch threads, ready."""
        proc = self.start()
        proc.wait_ready()
        return proc

    def close(self) -> None:
        if self.proc is not None:
            self.proc.close()
            self.proc = None


POOL = EvaluatorPool()


def defining_modules(mechs: list[Any]) -> list[tuple[str, str | None]]:
    """(module name, file) of each mechanism class: what the evaluator process imports to load them."""
    names = sorted({type(m).__module__ for m in mechs})
    return [(n, getattr(sys.modules.get(n), "__file__", None)) for n in names]


def evaluate_saved(case: Any, saved: list[Path | str],
                   modules: list[tuple[str, str | None]]) -> list[tuple[dict[str, Any], float]]:
    """Score each saved mechanism of ``case`` (one per budget) in the evaluator process.

    Parameters
    ----------
    case : Case
    saved : list
        Per budget: the saved file, or the error text of a mechanism that could not be saved.
    modules : list of (str, str or None)
        Modules to import there first, by name or else from their file (they register third-party
        mechanism types): :func:`defining_modules`.

    Returns
    -------
    list of (dict, float)
        Per budget, the Record fields of :func:`~privbench.bench.execute.score_budget` (or a failed
        status and error) and the seconds its evaluation took.
    """
    return POOL.get().request((case, [str(p) if isinstance(p, Path) else None for p in saved],
                               [None if isinstance(p, Path) else p for p in saved], modules, case_budget_kind(case)))


def case_budget_kind(case: Any) -> str:
    """``Learner.budget_kind()`` of the case's learner with its parameters (``"distortion"`` if it cannot
    be built: a declaration, so a missing one means the common meaning).  Read in the process that trains
    (the evaluator process builds no learner: that would import a plug-in's module there)."""
    from privbench.learners import make_learner

    try:
        return str(make_learner(case.learner, **case.learner_params).budget_kind())
    except Exception:  # noqa: BLE001 - the fit already refused or recorded a bad learner
        return "distortion"


def temporary_directory() -> tempfile.TemporaryDirectory:
    """Where mechanisms go when a caller keeps no results directory (removed afterwards)."""
    return tempfile.TemporaryDirectory(prefix="privbench-mechanisms-")
