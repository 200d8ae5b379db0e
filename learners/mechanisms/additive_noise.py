"""Clipped additive Gaussian noise Z = clip(U + sigma N(0, I), lo, hi)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from ..base import Mechanism, mechanism_type


@mechanism_type("additive-noise")
class AdditiveNoise(Mechanism):
    """Z = U + sigma N(0, I), optionally clipped to [lo, hi] (continuous-U tasks of any dimension).

    ``sigma`` = 0 is the identity release.  ``lo``/``hi`` (both or neither) keep an
    image release inside (0, 1), where its per-pixel cross-entropy is finite.
    """

    def __init__(self, task: Task, budget: float, sigma: float, lo: float | None = None, hi: float | None = None,
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        if task.kind == "finite":
            raise InputError("additive-noise mechanisms are for continuous-U tasks")
        self.sigma = float(sigma)
        if not (np.isfinite(self.sigma) and self.sigma >= 0):
            raise InputError(f"sigma={sigma!r} must be a finite number >= 0")
        if (lo is None) != (hi is None) or (lo is not None and not float(lo) < float(hi)):  # type: ignore[arg-type]
            raise InputError(f"clip range lo={lo!r}, hi={hi!r} must be two numbers lo < hi, or neither")
        self.lo = None if lo is None else float(lo)
        self.hi = None if hi is None else float(hi)

    def params(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "lo": self.lo, "hi": self.hi}

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        u = w[:, -self.task.d_u:]  # type: ignore[operator]
        z = u + self.sigma * rng.standard_normal(u.shape) if self.sigma > 0 else u.copy()
        return z if self.lo is None else np.clip(z, self.lo, self.hi)

    def _state(self):
        clip = [] if self.lo is None else [self.lo, self.hi]
        return {"clip": clip}, {"sigma": torch.tensor([self.sigma], dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        clip = config["clip"] or [None, None]
        return cls(task, budget, float(tensors["sigma"][0]), clip[0], clip[1], info)
