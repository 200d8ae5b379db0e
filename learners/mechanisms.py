"""Mechanism types shared by several learners.

``finite-channel``   a row-stochastic matrix P(Z=z | W=w) (finite tasks).
``linear-gaussian``  Z = A U + B S + N(0, noise_cov) (gaussian tasks).
``constant``         Z = c (continuous-U tasks).
``image-constant-or-identity``  images: Z = U, or a constant image.
``additive-noise``   Z = clip(U + sigma N(0, I), lo, hi) (mixture tasks with vector U, images).
``mixture-shift``    GAP §4's Z = U + (1-S) beta0 - S beta1 + ((1-S) gamma0 + S gamma1) N
                     (mixture tasks; with observation ``useful`` beta1 = -beta0 and
                     gamma1 = gamma0, i.e. Z = U + beta0 + gamma0 N).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from .base import Mechanism, mechanism_type


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
        z = (u[:, None] >= cdf[w]).sum(axis=1)
        return np.minimum(z, self.task.n_z - 1).astype(np.int64)  # type: ignore[operator]

    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {"channel": torch.as_tensor(self._channel, dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, tensors["channel"].numpy(), info)


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


@mechanism_type("constant")
class ConstantGaussian(Mechanism):
    """Z = c for every input (continuous-U tasks)."""

    def __init__(self, task: Task, budget: float, value: Any, info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        self.value = np.asarray(value, dtype=float).reshape(task.d_u)  # type: ignore[arg-type]

    def params(self) -> dict[str, Any]:
        return {"value": self.value.tolist()}

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        return np.broadcast_to(self.value, (len(w), self.value.size)).copy()

    def _state(self):
        return {}, {"value": torch.as_tensor(self.value, dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, tensors["value"].numpy(), info)


@mechanism_type("image-constant-or-identity")
class ConstantOrIdentityImage(Mechanism):
    """Images: Z = U (``value`` None) or Z = a constant image."""

    def __init__(self, task: Task, budget: float, value: Any, info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        self.value = None if value is None else np.asarray(value, dtype=float).reshape(task.d_u)  # type: ignore[arg-type]

    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        w = self.task.check_w(w)
        u = w[:, -self.task.d_u:]  # type: ignore[operator]
        return u.copy() if self.value is None else np.broadcast_to(self.value, u.shape).copy()

    def _state(self):
        if self.value is None:
            return {"identity": True}, {}
        return {"identity": False}, {"value": torch.as_tensor(self.value, dtype=torch.float64)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        return cls(task, budget, None if config["identity"] else tensors["value"].numpy(), info)


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
