"""The constant release Z = c (continuous-U tasks)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.tasks import Task

from ..base import Mechanism, mechanism_type


@mechanism_type("constant")
class ConstantGaussian(Mechanism):
    """Z = c for every input (continuous-U tasks)."""

    def __init__(self, task: Task, budget: float, value: Any, info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        self.value = np.asarray(value, dtype=float).reshape(task.d_u)  # type: ignore[arg-type]

    def params(self) -> dict[str, Any]:
        return {"value": self.value.tolist()}

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        return np.broadcast_to(self.value, (len(w), self.value.size)).copy()

    def _state(self):
        return {}, {"value": torch.as_tensor(self.value, dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, tensors["value"].numpy(), info)
