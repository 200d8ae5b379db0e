"""The privacy-preserving VAE's mechanism (see :mod:`privbench.learners.private_vae`): encode the
image, draw a code Y ~ q(Y | x) (or take its mean), release the decoded image sigmoid(dec(Y))."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .autoencoder_mechanism import AutoencoderMechanism
from .base import mechanism_type
from .nn.core import rng_generator


@mechanism_type("private-vae")
class PrivateVAEMechanism(AutoencoderMechanism):
    """A fine-tuned image VAE.

    ``config``: the Autoencoder's config plus ``sample_posterior`` (release the decoded draw Y ~ q,
    the code the privacy term was trained on, or the decoded posterior mean).  ``tensors``:
    ``enc.*``, ``dec.*`` (plain MLPs, ELU).  W may be U or (S, U): only U is read.
    """

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        gen = rng_generator(rng)
        u = torch.as_tensor(w[:, -self.task.d_u:])  # type: ignore[operator]
        with torch.no_grad():
            mu, logvar = self.autoencoder.encode(u)
            if self.config["sample_posterior"]:
                mu = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen, dtype=torch.float64)
            return self.autoencoder.decode(mu).numpy().astype(np.float64)
