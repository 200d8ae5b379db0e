"""The learner API: :class:`Learner` (trains) and :class:`Mechanism` (releases).

Rules (DESIGN.md): a learner sees training samples and a
:class:`~privbench.datasets.tasks.Task` only, never a scenario and never
``privbench.theory``.  ``__init__`` stores hyper-parameters and nothing else;
:meth:`Learner.fit` validates its input and returns fitted mechanisms.  No
global RNG: every random draw comes from the ``seed`` given to ``fit`` (a
``torch.Generator``) or the ``rng`` given to ``release``.

Mechanisms save to one file (``torch.save`` of plain tensors, strings and
numbers) and load with ``torch.load(weights_only=True)``: a file holding any
pickled object is refused.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from privbench.datasets.errors import InputError, check_name_free
from privbench.datasets.files import make_default_mode
from privbench.datasets.validate import check_budgets, check_choice  # noqa: F401 - re-exported for learners
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task
from privbench.datasets.vocabulary import DISTORTIONS

from .errors import TrainingError
from .serves import Serves, as_serves

FORMAT = "privbench-mechanism/1"


# --------------------------------------------------------------------------
# mechanisms
# --------------------------------------------------------------------------

MECHANISM_TYPES: dict[str, type["Mechanism"]] = {}


def mechanism_type(name: str):
    """Class decorator: register a Mechanism subclass under ``name`` for :func:`load_mechanism`.

    A name is registered once: a second class under a taken name (a plug-in named like a built-in type)
    is refused with an :class:`InputError` naming both.
    """

    def deco(cls: type[Mechanism]) -> type[Mechanism]:
        check_name_free("mechanism type", name, MECHANISM_TYPES.get(name), cls)
        cls.type_name = name
        MECHANISM_TYPES[name] = cls
        return cls

    return deco


class Mechanism(ABC):
    """A fitted privatizer: maps what it observes, W, to a release Z.

    Attributes
    ----------
    task : Task
    budget : float
        The distortion budget it was trained for.
    info : dict
        JSON-able training facts (learner name, steps, final losses, flags such
        as ``collapsed``); never used for evaluation.
    """

    type_name: ClassVar[str] = ""

    def __init__(self, task: Task, budget: float, info: dict[str, Any] | None = None) -> None:
        self.task = task
        self.budget = float(budget)
        self.info = dict(info or {})

    @abstractmethod
    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        """Draw Z for each row of W.

        Parameters
        ----------
        w : array_like
            Finite tasks: labels, shape (n,), in 0..n_w-1.  Otherwise floats,
            shape (n, d_w) (see :meth:`Task.observe`).
        rng : numpy.random.Generator
            The only source of randomness.

        Returns
        -------
        ndarray
            Finite: int64 labels, shape (n,).  Otherwise float64, shape (n, d_u).
        """

    def channel(self) -> np.ndarray | None:
        """P(Z=z | W=w), shape (n_w, n_z), where the release alphabet is finite; else None."""
        return None

    def params(self) -> dict[str, Any] | None:
        """Named parameters of a parametric mechanism (JSON-able), else None."""
        return None

    # --- persistence ---------------------------------------------------
    @abstractmethod
    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(config, tensors): a JSON-able config and a dict of name -> torch.Tensor."""

    @classmethod
    @abstractmethod
    def _from_state(cls, task: Task, budget: float, info: dict[str, Any], config: dict[str, Any],
                    tensors: dict[str, Any]) -> "Mechanism":
        """Rebuild from :meth:`_state`."""

    def save(self, path: str | os.PathLike) -> Path:
        """Write the mechanism to ``path`` atomically (a temporary file, then a rename)."""
        import torch

        config, tensors = self._state()
        blob = {
            "format": FORMAT,
            "type": self.type_name,
            "task": json.dumps(self.task.to_dict()),
            "budget": self.budget,
            "info": json.dumps(self.info),
            "config": json.dumps(config),
            "tensors": {k: v.detach().cpu().contiguous() for k, v in tensors.items()},
        }
        buf = io.BytesIO()
        torch.save(blob, buf)
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".pt", dir=path.parent)
        try:
            make_default_mode(fd)  # 0644 under umask 022, not mkstemp's 0600
            with os.fdopen(fd, "wb") as fh:
                fh.write(buf.getvalue())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return path

    def check_finite_state(self) -> None:
        """Raise TrainingError when a tensor of the saved state has a NaN/inf entry."""
        _, tensors = self._state()
        for name, t in tensors.items():
            if not bool(np.all(np.isfinite(np.asarray(t.detach().cpu().double().numpy())))):
                raise TrainingError(f"mechanism parameter {name!r} is not finite (NaN/inf); refused")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(budget={self.budget:g}, task={self.task.kind}/{self.task.observation})"


class ConfigTensorsMechanism(Mechanism):
    """A mechanism whose whole state is ``self.config`` (JSON-able) and ``self.tensors`` (name -> tensor).

    Subclasses take ``(task, budget, config, tensors, info)``; saving and loading need nothing more.
    """

    config: dict[str, Any]
    tensors: dict[str, Any]

    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return dict(self.config), dict(self.tensors)

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, config, tensors, info)


# --------------------------------------------------------------------------
# learners
# --------------------------------------------------------------------------


class Learner(ABC):
    """Base class of every trainable privatizer (scikit-learn style).

    Subclasses declare ``name``, ``serves`` (a :class:`~privbench.learners.serves.Serves`: task
    kinds, alphabet sizes, dimensions, distortions; default every task; a tuple of kinds is the
    older form), the ``observations`` and ``privacies`` they handle, store hyper-parameters in
    ``__init__`` (keyword arguments with defaults, nothing computed), and implement :meth:`_fit`.
    :meth:`supports` is the one test of whether a learner serves a task: suites and
    ``privbench check`` skip (and list) what it refuses; a learner may override it (or
    :meth:`refusal`, to say why) for limits a declaration cannot express.
    ``test_params`` are hyper-parameters small enough for a test that runs in
    seconds (benchopt's ``test_parameters``).
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    serves: ClassVar["Serves | tuple[str, ...]"] = Serves()
    observations: ClassVar[tuple[str, ...]] = ("useful", "full")
    privacies: ClassVar[tuple[str, ...]] = ("mi", "map", "chi2")
    test_params: ClassVar[dict[str, Any]] = {}
    #: Non-standard bench protocols (privbench.datasets.vocabulary.PROTOCOLS) this learner supports.
    protocols: ClassVar[tuple[str, ...]] = ()
    #: Distortions served; ``logloss`` (the privacy funnel, finite tasks without a distortion matrix) is opt-in.
    distortions: ClassVar[tuple[str, ...]] = tuple(d for d in DISTORTIONS if d != "logloss")
    #: Whether :meth:`fit_many` trains several training sets in one batched network (``_fit_many``);
    #: otherwise it fits them one after the other.  Either way each set's mechanisms are its own fit's.
    batches_fits: ClassVar[bool] = False
    #: Task kinds on which this learner's networks are large enough for a GPU to pay.  ``device="auto"``
    #: trains those on cuda where a GPU is available and everything else on cpu: the small networks of
    #: the other tasks train slower on a GPU, tens of times slower when several processes share one
    #: (README, "Reproducing the four papers"); ``device="cuda"`` puts every learner there.
    gpu_task_kinds: ClassVar[tuple[str, ...]] = ()

    def prefers_gpu(self, task: Task) -> bool:
        """Whether ``device="auto"`` trains this learner on ``task`` on a GPU (where one is available)."""
        return task.kind in self.gpu_task_kinds

    def get_params(self) -> dict[str, Any]:
        """The constructor's keyword arguments as stored (scikit-learn's get_params)."""
        sig = inspect.signature(type(self).__init__)
        return {k: getattr(self, k) for k in sig.parameters if k != "self" and hasattr(self, k)}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The hyper-parameters training uses for ``task`` with ``n_train`` training samples.

        The one place a learner resolves its hyper-parameters: the constructor's values,
        each ``None`` filled from the chosen schedule (or from the task or the sample size
        where a default depends on them), validated.  :meth:`fit` trains with exactly these
        values.  The default returns the constructor's parameters as stored
        (:meth:`get_params`); learners with schedules override it.

        Parameters
        ----------
        task : Task
        n_train : int
            Number of training samples.

        Returns
        -------
        dict
            Hyper-parameter name -> value.

        Raises
        ------
        InputError
            A hyper-parameter is out of range or unknown.
        """
        return self.get_params()

    @classmethod
    def declared(cls) -> Serves:
        """The learner's ``serves`` as a :class:`~privbench.learners.serves.Serves`."""
        return as_serves(cls.serves)

    def budget_kind(self) -> str:
        """What a budget means for this learner with its parameters: ``"distortion"`` (the task's
        distortion <= budget: the bench flags an overshoot) or another name (e.g. ``"chi2-level"``:
        the bench still measures the distortion but never calls it an overshoot of the budget).

        A declaration of the learner's interface, like ``serves``: the bench reads it from the case's
        learner and parameters, never from a fitted mechanism's account of itself.
        """
        return "distortion"

    def refusal(self, task: Task) -> str | None:
        """Why this learner cannot train for ``task`` (one phrase), or None when it can.

        From the declarations: ``serves``, ``observations``, ``privacies`` (``task.privacy``
        is the metric it is asked to train for) and ``distortions`` (``logloss`` is opt-in).
        """
        why = self.declared().refusal(task)
        if why is None and task.observation not in self.observations:
            why = f"serves observations {', '.join(self.observations)}, not {task.observation}"
        if why is None and task.privacy not in self.privacies:
            why = f"trains for privacy {', '.join(self.privacies)}, not {task.privacy}"
        if why is None and task.distortion not in self.distortions:
            why = f"trains for distortions {', '.join(self.distortions)}, not {task.distortion}"
        return why

    def supports(self, task: Task) -> bool:
        """Whether this learner can train for ``task`` (default: :meth:`refusal` finds nothing)."""
        return self.refusal(task) is None

    def fit(self, samples: Samples, task: Task, budget: float | Sequence[float], seed: int = 0,
            device: str = "auto") -> "Mechanism | list[Mechanism]":
        """Train on ``samples`` for ``task`` at one budget or a list of budgets.

        Parameters
        ----------
        samples : Samples
            Training draws of (S, U); see :meth:`Task.check_samples` for shapes.
        task : Task
        budget : float or sequence of float
            Distortion budget(s) >= 0.  A sequence trains the whole curve (batched
            where the learner can) and returns one mechanism per budget.
        seed : int
            The only source of randomness of training.
        device : {"auto", "cpu", "cuda"}

        Returns
        -------
        Mechanism, or list of Mechanism (one per budget, same order) for a sequence.
        """
        if not isinstance(task, Task):
            raise InputError(f"task must be a privbench Task, got {type(task).__name__}")
        if not self.supports(task):
            raise InputError(f"learner {self.name!r} does not serve this {task.kind} task with observation="
                             f"{task.observation}, privacy={task.privacy}: {self.refusal(task) or 'supports() refuses it'}")
        samples = task.check_samples(samples)
        many = not np.isscalar(budget) and not isinstance(budget, (int, float))
        budgets = check_budgets(budget if many else [budget])
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"seed={seed!r} must be a non-negative integer")
        from .nn.core import resolve_device

        dev = resolve_device(device, self.prefers_gpu(task))
        mechs = self._fit(samples, task, budgets, int(seed), dev)
        if len(mechs) != len(budgets):  # pragma: no cover - a learner bug
            raise RuntimeError(f"{self.name} returned {len(mechs)} mechanisms for {len(budgets)} budgets")
        for m in mechs:
            m.check_finite_state()
            m.info.setdefault("learner", self.name)
        return mechs if many else mechs[0]

    def fit_many(self, samples_list: Sequence[Samples], task: Task, budgets: Sequence[float],
                 seeds: Sequence[int], device: str = "auto") -> list[list[Mechanism]]:
        """:meth:`fit` of each (samples, seed) pair at ``budgets`` (a case's repetitions), one list per pair.

        A learner that declares :attr:`batches_fits` trains them together (one batched network for
        the members of all sets of one :meth:`batch_group`, each set's members seeded, fed and drawn as
        in its own ``fit``).  Otherwise one ``fit`` after the other.
        """
        if len(samples_list) != len(seeds):
            raise InputError(f"fit_many got {len(samples_list)} training sets and {len(seeds)} seeds (one each)")
        alone = not self.batches_fits or len(samples_list) < 2
        if alone or not isinstance(task, Task) or not self.supports(task):  # fit's own checks refuse a bad task
            return [self.fit(s, task, list(budgets), seed=sd, device=device) for s, sd in zip(samples_list, seeds)]
        checked = [task.check_samples(s) for s in samples_list]
        for sd in seeds:
            if isinstance(sd, bool) or not isinstance(sd, (int, np.integer)) or sd < 0:
                raise InputError(f"seed={sd!r} must be a non-negative integer")
        from .nn.core import resolve_device

        groups: dict[Any, list[int]] = {}
        for r, s in enumerate(checked):
            groups.setdefault(self.batch_group(task, len(s)), []).append(r)
        out: list[list[Mechanism]] = [[] for _ in checked]
        for members in groups.values():
            fitted = self._fit_many([checked[r] for r in members], task, check_budgets(list(budgets)),
                                    [int(seeds[r]) for r in members],
                                    resolve_device(device, self.prefers_gpu(task)))
            for r, mechs in zip(members, fitted):
                out[r] = mechs
        for mechs in out:
            for m in mechs:
                m.check_finite_state()
                m.info.setdefault("learner", self.name)
        return out

    def batch_group(self, task: Task, n_train: int) -> Any:
        """Training sets whose groups are equal may share one batched network in :meth:`fit_many` (for
        learners declaring :attr:`batches_fits`); by default those of the same size."""
        return n_train

    def _fit_many(self, samples_list: list[Samples], task: Task, budgets: np.ndarray, seeds: list[int],
                  device: Any) -> list[list[Mechanism]]:
        """Train several checked training sets at once (only for learners declaring :attr:`batches_fits`):
        sets of one :meth:`batch_group`."""
        return [self._fit(s, task, budgets, sd, device) for s, sd in zip(samples_list, seeds)]

    @abstractmethod
    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        """Train; ``samples`` are checked, ``budgets`` a 1-d float array, ``device`` a torch.device."""
