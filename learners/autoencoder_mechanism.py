"""The common state of the mechanisms built on a trained image/tabular VAE (the latent filter's and
the privacy-preserving VAE's): their config, their tensors on the CPU and the Autoencoder over them."""

from __future__ import annotations

from typing import Any

import torch

from privbench.datasets.tasks import Task

from .base import ConfigTensorsMechanism
from .nn.vae import Autoencoder


class AutoencoderMechanism(ConfigTensorsMechanism):
    """A :class:`ConfigTensorsMechanism` whose ``tensors`` hold an Autoencoder's ``enc.*`` and ``dec.*``
    (and whatever the subclass adds); ``self.autoencoder`` runs them.  Not a mechanism type itself."""

    def __init__(self, task: Task, budget: float, config: dict[str, Any], tensors: dict[str, torch.Tensor],
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        self.config = dict(config)
        self.tensors = {k: v.detach().cpu() for k, v in tensors.items()}
        self.autoencoder = Autoencoder(self.config, self.tensors, {})
