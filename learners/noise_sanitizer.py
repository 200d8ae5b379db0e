"""The chi-square sanitizer's mechanism: Z = U + a h(C, N), then the utility network f_tau for
``utility="mlp"`` (see :mod:`privbench.learners.chi2_sanitizer`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from .base import ConfigTensorsMechanism, mechanism_type
from .nn.core import rng_generator
from .nn.sweep import label_features, mlp_forward


@mechanism_type("noise-sanitizer")
class NoiseSanitizer(ConfigTensorsMechanism):
    """Z = U + a h(C, N) (then f_tau for ``utility="mlp"``); see the module docstring.

    ``config``: condition, noise_dim, activation, utility, utility_activation,
    amplitude (a), u_mean, u_std (d_u,), s_mean, s_std (gaussian S).
    ``tensors``: ``h.{j}.weight``/``bias`` and, for ``mlp``, ``f.{j}.*``.
    """

    def __init__(self, task: Task, budget: float, config: dict[str, Any], tensors: dict[str, torch.Tensor],
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        if task.kind not in ("mixture", "gaussian"):
            raise InputError(f"noise-sanitizer mechanisms are for mixture/gaussian tasks, not {task.kind}")
        self.config = dict(config)
        self.tensors = {k: v.detach().cpu() for k, v in tensors.items()}

    def conditioning(self, w: np.ndarray) -> np.ndarray:
        """C for canonical W rows, shape (n, d_c) (possibly d_c = 0)."""
        cfg, task = self.config, self.task
        cond = cfg["condition"]
        if cond == "none":
            return np.zeros((len(w), 0))
        if task.kind == "mixture":
            s = w[:, 0]
            if np.any((s != np.round(s)) | (s < 0) | (s >= task.n_s)):  # type: ignore[operator]
                raise InputError(f"the S column of W must hold labels 0..{task.n_s - 1}")  # type: ignore[operator]
            sf = label_features(s.astype(np.int64), task.n_s)  # type: ignore[arg-type]
            u = w[:, 1:]
        else:
            d_s = task.d_s
            sf = (w[:, :d_s] - np.asarray(cfg["s_mean"])) / np.asarray(cfg["s_std"])
            u = w[:, d_s:]
        if cond == "s":
            return sf
        uf = (u - np.asarray(cfg["u_mean"])) / np.asarray(cfg["u_std"])
        return np.concatenate([sf, uf], 1) if task.observation == "full" else uf

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        cfg = self.config
        gen = rng_generator(rng)
        c = torch.as_tensor(self.conditioning(w), dtype=torch.float64)
        n = torch.randn(len(w), cfg["noise_dim"], generator=gen, dtype=torch.float64)
        u = torch.as_tensor(w[:, -self.task.d_u:])  # type: ignore[operator]
        with torch.no_grad():
            y = u + cfg["amplitude"] * mlp_forward(self.tensors, "h", torch.cat([c, n], 1), cfg["activation"])
            if cfg["utility"] == "mlp":
                mean = torch.as_tensor(cfg["u_mean"], dtype=torch.float64)
                std = torch.as_tensor(cfg["u_std"], dtype=torch.float64)
                y = y + std * mlp_forward(self.tensors, "f", (y - mean) / std, cfg["utility_activation"])
        return y.numpy().astype(np.float64)
