"""GAP §4's shift-and-noise mechanism for binary Gaussian mixtures."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from ..base import Mechanism, mechanism_type


MIXTURE_PARAMS = ("beta0", "beta1", "gamma0", "gamma1")


@mechanism_type("mixture-shift")
class MixtureShift(Mechanism):
    """GAP §4 mechanism for a binary S and scalar U (see module docstring)."""

    def __init__(self, task: Task, budget: float, beta0: float, beta1: float, gamma0: float,
                 gamma1: float, info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        if task.kind != "mixture" or task.n_s != 2 or task.d_u != 1:
            raise InputError("mixture-shift mechanisms are for mixture tasks with binary S and scalar U")
        vals = [float(x) for x in (beta0, beta1, gamma0, gamma1)]
        if task.observation == "useful" and (abs(vals[1] + vals[0]) > 1e-12 or abs(vals[3] - vals[2]) > 1e-12):
            raise InputError("a mechanism observing U only needs beta1 = -beta0 and gamma1 = gamma0")
        self.beta0, self.beta1, self.gamma0, self.gamma1 = vals

    def params(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in MIXTURE_PARAMS}

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        u = w[:, -1]
        n = rng.standard_normal(len(w))
        if self.task.observation == "useful":
            return (u + self.beta0 + abs(self.gamma0) * n)[:, None]
        s = w[:, 0]
        if np.any((s != 0) & (s != 1)):
            raise InputError("the S column of W must be 0 or 1")
        shift = np.where(s == 1, -self.beta1, self.beta0)
        scale = np.where(s == 1, abs(self.gamma1), abs(self.gamma0))
        return (u + shift + scale * n)[:, None]

    def _state(self):
        return {}, {"params": torch.tensor([self.beta0, self.beta1, self.gamma0, self.gamma1], dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, *tensors["params"].tolist(), info=info)
