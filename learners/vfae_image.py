"""The variational fair autoencoder on images: the chi-square paper's VFAE row (§V-B, Tables I-II).

:class:`~privbench.learners.vfae.VFAE` unchanged (unsupervised, Gaussian decoder N(dec(z1, s), I)
on the pixel values, MMD weight beta as the budget) declared for ``image`` tasks; the paper's
encoder takes S as an input channel (``encode_s=True`` with observation ``full``), and the
release that a reconstruction error can be measured on is ``release="decoded"``
(sum_s P(S=s) dec(z1, s), in the image's space), clipped to the pixel range [0, 1] (a function
of z1 still, so no more telling about S; it only lowers the squared error, and keeps the per-pixel
cross-entropy finite).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Mechanism
from .registry import register
from .serves import Serves
from .vfae import VFAE


@register
class VFAEImage(VFAE):
    """:class:`~privbench.learners.vfae.VFAE` for image tasks (module docstring)."""

    name = "vfae-image"
    gpu_task_kinds = ("image",)
    summary = ("Louizos et al. variational fair autoencoder on images (the chi-square paper's VFAE row); "
               "budget = MMD weight beta (more = more private), NOT a distortion budget")
    serves = Serves(kinds=("image",), distortions=("mse", "xent"))
    distortions = ("mse", "xent")
    test_params = {"latent_dim": 2, "hidden": 8, "steps": 15, "batch_size": 32, "release": "decoded"}

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        mechs = super()._fit(samples, task, budgets, seed, device)
        if self.release == "decoded":
            for m in mechs:
                m.config["clip"] = [0.0, 1.0]  # type: ignore[attr-defined]
        return mechs
