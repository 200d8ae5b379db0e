"""The VFAE's mechanism: its encoder's code z1, released (see :mod:`privbench.learners.vfae`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from .base import ConfigTensorsMechanism, mechanism_type
from .nn.core import rng_generator
from .nn.sweep import label_features, mlp_forward


@mechanism_type("vfae")
class VFAEMechanism(ConfigTensorsMechanism):
    """Encoder q(z1 | x, s) (and the decoder, for ``release="decoded"``).

    ``config``: latent_dim, full (whether the encoder sees S), release (``latent`` or
    ``decoded``), sample_posterior, s_prior (training frequencies of S, for ``decoded``).
    ``tensors``: ``enc.*``, ``dec.*`` (plain MLPs, ELU).

    ``latent``: Z = (z1, 0, ..., 0), the code in the first latent_dim of U's d_u
    coordinates (the task's release shape); its squared distance to U is then no
    distortion of the data.  ``decoded``: Z = sum_k P(S=k) dec(z1, k), a function of
    z1 alone (so it tells no more about S than z1), in U's space, clipped to ``config["clip"]`` (lo, hi)
    where given (images: [0, 1]).
    """

    def __init__(self, task: Task, budget: float, config: dict[str, Any], tensors: dict[str, torch.Tensor],
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        self.config = dict(config)
        self.tensors = {k: v.detach().cpu() for k, v in tensors.items()}

    def code(self, w: np.ndarray, gen: torch.Generator) -> torch.Tensor:
        """z1 for canonical W rows, shape (n, latent_dim), float64."""
        task, cfg = self.task, self.config
        u = torch.as_tensor(w[:, -task.d_u:], dtype=torch.float64)  # type: ignore[operator]
        if cfg["full"]:
            s = w[:, 0]
            if np.any((s != np.round(s)) | (s < 0) | (s >= task.n_s)):  # type: ignore[operator]
                raise InputError(f"the S column of W must hold labels 0..{task.n_s - 1}")  # type: ignore[operator]
            u = torch.cat([u, torch.as_tensor(label_features(s.astype(np.int64), task.n_s))], 1)  # type: ignore[arg-type]
        h = mlp_forward(self.tensors, "enc", u, "elu")
        d = cfg["latent_dim"]
        mu, logvar = h[:, :d], h[:, d:].clamp(-12.0, 8.0)
        if not cfg["sample_posterior"]:
            return mu
        return mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen, dtype=torch.float64)

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        gen = rng_generator(rng)
        with torch.no_grad():
            z = self.code(w, gen)
            if self.config["release"] == "latent":
                out = torch.zeros(len(w), self.task.d_u, dtype=torch.float64)  # type: ignore[arg-type]
                out[:, : z.shape[1]] = z
                return out.numpy()
            n_s = self.task.n_s
            prior = self.config["s_prior"]
            out = torch.zeros(len(w), self.task.d_u, dtype=torch.float64)  # type: ignore[arg-type]
            for k in range(n_s):  # type: ignore[arg-type]
                onehot = torch.zeros(len(w), n_s, dtype=torch.float64)  # type: ignore[arg-type]
                onehot[:, k] = 1.0
                out += prior[k] * mlp_forward(self.tensors, "dec", torch.cat([z, onehot], 1), "elu")
            if self.config.get("clip") is not None:  # images: into [0, 1] (a function of z1 still)
                out = out.clamp(*self.config["clip"])
            return out.numpy()
