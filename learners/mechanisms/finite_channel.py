"""A finite mechanism: the channel matrix P(Z=z | W=w)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from ..base import Mechanism, mechanism_type


@mechanism_type("finite-channel")
class FiniteChannel(Mechanism):
    """A finite mechanism given by its channel matrix, shape (n_w, n_z)."""

    def __init__(self, task: Task, budget: float, channel: Any, info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        ch = np.asarray(channel, dtype=float)
        if task.kind != "finite" or ch.shape != (task.n_w, task.n_z):
            raise InputError(f"channel has shape {ch.shape}, expected ({task.n_w}, {task.n_z}) for this task")
        if not np.all(np.isfinite(ch)) or np.any(ch < -1e-9) or np.any(np.abs(ch.sum(axis=1) - 1) > 1e-6):
            raise InputError("channel must be finite, non-negative, with rows summing to 1")
        ch = np.clip(ch, 0.0, None)
        self._channel = ch / ch.sum(axis=1, keepdims=True)

    def channel(self) -> np.ndarray:
        return self._channel.copy()

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        cdf = np.cumsum(self._channel, axis=1)
        u = rng.random(w.size)
        # z = #{k : u >= cdf[w, k]}, counted one column at a time: the same integers as comparing against
        # the gathered (n, n_z) rows at once, 3-7 times faster for small alphabets (the G-test of the
        # channel releases millions of labels)
        z = np.zeros(w.size, dtype=np.int64)
        for k in range(cdf.shape[1]):
            z += u >= cdf[w, k]
        return np.minimum(z, self.task.n_z - 1).astype(np.int64)  # type: ignore[operator]

    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {"channel": torch.as_tensor(self._channel, dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        saved = tensors["channel"].numpy().astype(float)
        mech = cls(task, budget, saved, info)  # validates the saved channel
        mech._channel = saved  # exactly the saved matrix (normalising twice moves the last bit)
        return mech
