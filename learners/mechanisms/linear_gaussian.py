"""The linear Gaussian mechanism Z = A U + B S + N(0, noise_cov) (gaussian tasks)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from ..base import Mechanism, mechanism_type


@mechanism_type("linear-gaussian")
class LinearGaussian(Mechanism):
    """Z = A U + B S + N(0, noise_cov); A (d_u, d_u), B (d_u, d_s), noise_cov (d_u, d_u) PSD."""

    def __init__(self, task: Task, budget: float, A: Any, B: Any, noise_cov: Any,
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        if task.kind != "gaussian":
            raise InputError("linear-gaussian mechanisms are for gaussian tasks")
        d_s, d_u = task.d_s, task.d_u
        self.A = np.asarray(A, dtype=float).reshape(d_u, d_u)
        self.B = np.asarray(B, dtype=float).reshape(d_u, d_s)
        self.noise_cov = np.asarray(noise_cov, dtype=float).reshape(d_u, d_u)
        if task.observation == "useful" and np.any(self.B != 0):
            raise InputError("a mechanism observing U only must have B = 0")
        w, v = np.linalg.eigh(0.5 * (self.noise_cov + self.noise_cov.T))
        if w.min() < -1e-9 * max(1.0, abs(w).max()):
            raise InputError("noise_cov must be positive semi-definite")
        self._factor = v * np.sqrt(np.clip(w, 0.0, None))

    def params(self) -> dict[str, Any]:
        return {"A": self.A.tolist(), "B": self.B.tolist(), "noise_cov": self.noise_cov.tolist()}

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        d_u = self.task.d_u
        u = w[:, -d_u:]
        z = u @ self.A.T + rng.standard_normal((len(w), d_u)) @ self._factor.T
        if self.task.observation == "full":
            z = z + w[:, : self.task.d_s] @ self.B.T
        return z

    def _state(self):
        t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
        return {}, {"A": t(self.A), "B": t(self.B), "noise_cov": t(self.noise_cov)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, tensors["A"].numpy(), tensors["B"].numpy(), tensors["noise_cov"].numpy(), info)
