"""The generative filter's mechanism: the frozen VAE with a linear latent filter
(see :mod:`privbench.learners.latent_filter`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError

from .autoencoder_mechanism import AutoencoderMechanism
from .base import mechanism_type
from .nn.core import rng_generator
from .nn.sweep import label_features


@mechanism_type("latent-filter")
class LatentFilterMechanism(AutoencoderMechanism):
    """Encoder + linear latent filter + decoder (module docstring).

    ``config``: the autoencoder's config plus noise_dim, feature ("onehot", "raw", "none"),
    s_mean, s_std (raw S), sample_posterior, divergence.  ``tensors``: ``enc.*``, ``dec.*``,
    ``gamma`` (latent_dim, noise_dim + d_feature).
    """

    def features(self, w: np.ndarray) -> np.ndarray:
        """The filter's S input y for canonical W rows, shape (n, d_feature)."""
        feat, task = self.config["feature"], self.task
        if feat == "none":
            return np.zeros((len(w), 0))
        if feat == "onehot":
            s = w[:, 0]
            if np.any((s != np.round(s)) | (s < 0) | (s >= task.n_s)):  # type: ignore[operator]
                raise InputError(f"the S column of W must hold labels 0..{task.n_s - 1}")  # type: ignore[operator]
            return label_features(s.astype(np.int64), task.n_s)  # type: ignore[arg-type]
        return (w[:, : task.d_s] - np.asarray(self.config["s_mean"])) / np.asarray(self.config["s_std"])

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        cfg = self.config
        gen = rng_generator(rng)
        u = torch.as_tensor(w[:, -self.task.d_u:])  # type: ignore[operator]
        y = torch.as_tensor(self.features(w), dtype=torch.float64)
        with torch.no_grad():
            mu, logvar = self.autoencoder.encode(u)
            eps = torch.randn(mu.shape, generator=gen, dtype=torch.float64)
            z = mu + (torch.exp(0.5 * logvar) * eps if cfg["sample_posterior"] else 0.0)
            noise = torch.randn(len(w), cfg["noise_dim"], generator=gen, dtype=torch.float64)
            z = z + torch.cat([noise, y], 1) @ self.tensors["gamma"].double().t()
            return self.autoencoder.decode(z).numpy().astype(np.float64)

    def params(self) -> dict[str, Any]:
        return {"gamma": self.tensors["gamma"].tolist()}
