"""Images: Z = U, or a constant image."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.tasks import Task

from ..base import Mechanism, mechanism_type


@mechanism_type("image-constant-or-identity")
class ConstantOrIdentityImage(Mechanism):
    """Images: Z = U (``value`` None) or Z = a constant image."""

    def __init__(self, task: Task, budget: float, value: Any, info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        self.value = None if value is None else np.asarray(value, dtype=float).reshape(task.d_u)  # type: ignore[arg-type]

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        u = w[:, -self.task.d_u:]  # type: ignore[operator]
        return u.copy() if self.value is None else np.broadcast_to(self.value, u.shape).copy()

    def _state(self):
        if self.value is None:
            return {"identity": True}, {}
        return {"identity": False}, {"value": torch.as_tensor(self.value, dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, None if config["identity"] else tensors["value"].numpy(), info)
