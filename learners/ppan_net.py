"""The fitted mechanism of the continuous PPAN learners: one member of a release network
(:mod:`privbench.learners.nn.release`), saved as a JSON config plus the member's tensors,
released on CPU with a ``torch.Generator`` seeded from the numpy rng.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from .base import ConfigTensorsMechanism, mechanism_type
from .calibration import apply_calibration
from .nn.core import rng_generator, to_tensor
from .nn.release import build_release


@mechanism_type("ppan-net")
class PPANNet(ConfigTensorsMechanism):
    """A PPAN release network (one member) for gaussian or mixture tasks.

    Parameters
    ----------
    task : Task
    budget : float
    config : dict
        JSON-able architecture: ``family`` (linear, gaussian, seed, gmm), ``d_w``, ``d_u``
        and the family's ``hidden``, ``activation``, ``bias``, ``n_noise``, ``residual``,
        ``n_components``; and ``calibration`` (``P``, ``Q``, ``b``: the budget calibration
        Z' = P Z + Q U + b of :mod:`privbench.learners.calibration`) where one was applied.
    tensors : dict of str to torch.Tensor
        The member's state dict (leading dimension 1).
    """

    def __init__(self, task: Task, budget: float, config: dict[str, Any], tensors: dict[str, Any],
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        if task.kind not in ("gaussian", "mixture"):
            raise InputError(f"ppan-net mechanisms are for gaussian or mixture tasks, not {task.kind}")
        if int(config.get("d_w", -1)) != task.d_w or int(config.get("d_u", -1)) != task.d_u:
            raise InputError(f"config d_w={config.get('d_w')}, d_u={config.get('d_u')} does not fit the task "
                             f"(d_w={task.d_w}, d_u={task.d_u})")
        self.config = dict(config)
        cal = self.config.get("calibration")
        self.calibration = None if cal is None else {key: _matrix(cal, key, task.d_u) for key in ("P", "Q", "b")}
        self.module = build_release(1, self.config)
        self.module.load_state_dict({k: torch.as_tensor(v, dtype=torch.float32) for k, v in tensors.items()})
        self.module.eval()

    def params(self) -> dict[str, Any]:
        return {"config": dict(self.config)}

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        gen = rng_generator(rng)
        with torch.no_grad():
            z = self.module.sample(to_tensor(w, torch.device("cpu"))[None], gen)[0]
        return apply_calibration(z.double().numpy(), w[:, -self.task.d_u:], self.calibration)

    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:  # the tensors live in the module
        return dict(self.config), {k: v.detach().clone() for k, v in self.module.state_dict().items()}


def _matrix(cal: Any, key: str, d_u: int) -> np.ndarray:
    """``cal[key]`` as a finite float array, (d_u, d_u) for P and Q, (d_u,) for b."""
    shape = (d_u,) if key == "b" else (d_u, d_u)
    try:
        a = np.asarray(cal[key], dtype=float)
    except (KeyError, TypeError, ValueError):
        a = None
    if a is None or a.shape != shape or not np.all(np.isfinite(a)):
        raise InputError(f"config calibration {key}={None if a is None else a.shape} must be finite numbers of "
                         f"shape {shape}")
    return a
