"""Networks of PPAN's continuous release mechanisms, batched over a budget sweep.

Each module holds ``k`` independent mechanisms (one per budget; every parameter and
buffer has a leading dimension ``k``) and maps W, shape (k, n, d_w), to releases.
U is the last ``d_u`` columns of W (:meth:`Task.observe`).  Families (PPAN §II-C):

``linear``    Z = W M (+ c) + eps L, eps ~ N(0, I): Gaussian noise of covariance L^T L.
              Without the offset c (gaussian tasks) the release is exactly a
              :class:`~privbench.learners.mechanisms.LinearGaussian` (A = M_U^T,
              B = M_S^T, noise_cov = L^T L).
``gaussian``  §II-C2 reparameterised Gaussian: Z = U + mu(W) + A(W) eps, (mu, A) an affine
              part plus an MLP of the standardised W, A a full d_u x d_u factor (Sigma = A A^T).
``seed``      §II-C3 universal approximator: Z = f(W, eps) (``residual``: U + f(W, eps);
              ``affine``: W M + c + eps L + f(W, eps)), eps ~ Uniform[-1, 1]^n_noise or
              N(0, I) (``seed_noise``) fed to the MLP as input.
``gmm``       appendix F: m Gaussian components, Z = U + mu_l(W) + diag(s_l(W)) eps with
              weights pi_l(W) (an affine mean shared by the components plus an MLP); training
              uses the exact expectation over the component l (eq (29)).

The fitted mechanism (one member, ``k = 1``) is
:class:`privbench.learners.ppan_net.PPANNet`; the adversaries are in
:mod:`privbench.learners.nn.adversary`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from privbench.datasets.errors import InputError

from .bundle import Streams
from .sweep import SweepMLP, init_members

FAMILIES = ("linear", "gaussian", "seed", "gmm")
MIN_SCALE = 1e-3  # initial noise scale floor (budget 0)


class SweepRelease(nn.Module):
    """Base of the k-member release modules.

    ``forward(w, gen)`` returns (z, pi): z (k, n, m, d_u) candidate releases and pi
    (k, n, m) their weights (m = 1, pi None, except for ``gmm``).  ``sample`` draws
    one release per row, (k, n, d_u).
    """

    def __init__(self, k: int, cfg: dict[str, Any]) -> None:
        super().__init__()
        self.k, self.cfg = k, dict(cfg)
        self.d_w, self.d_u = int(cfg["d_w"]), int(cfg["d_u"])
        self.register_buffer("w_shift", torch.zeros(k, 1, self.d_w))
        self.register_buffer("w_scale", torch.ones(k, 1, self.d_w))

    def _norm(self, w: torch.Tensor) -> torch.Tensor:
        return (w - self.w_shift) / self.w_scale

    def _u(self, w: torch.Tensor) -> torch.Tensor:
        return w[..., -self.d_u:]

    def _randn(self, shape: tuple[int, ...], gen: "torch.Generator | Streams", like: torch.Tensor) -> torch.Tensor:
        """Normals of ``shape`` (members first) from ``gen``: one generator, or a bundle's :class:`Streams`."""
        return Streams.of(gen, shape[0]).randn(shape, like)

    def forward(self, w: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor | None]:
        raise NotImplementedError  # pragma: no cover

    def sample(self, w: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        z, _ = self.forward(w, gen)
        return z[:, :, 0, :]

    @torch.no_grad()
    def setup(self, gens: Sequence[torch.Generator], w_mean: np.ndarray, w_std: np.ndarray,
              budgets: np.ndarray, u_cov: np.ndarray | None = None) -> None:
        """Initialise member i from ``gens[i]``; store the input standardisation.

        ``u_cov`` (d_u, d_u), the training covariance of U, lets the linear family start
        at the shrink-and-noise release of distortion exactly the budget (see
        :meth:`LinearRelease._setup`).
        """
        init_members(self, gens)
        self.w_shift.copy_(torch.as_tensor(w_mean, dtype=self.w_shift.dtype).expand_as(self.w_shift))
        self.w_scale.copy_(torch.as_tensor(w_std, dtype=self.w_scale.dtype).expand_as(self.w_scale))
        self._setup(np.asarray(budgets, dtype=float), u_cov)

    def _setup(self, budgets: np.ndarray, u_cov: np.ndarray | None) -> None:
        pass

    def _shrink(self, budgets: np.ndarray, u_cov: np.ndarray) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
        """t = budget / tr(cov_u) clipped to [0, 1], a root R with R^T R = cov_u, and E[U] (d_u,):
        Z = (1-t) U + t E[U] + eps sqrt(t(1-t)) R has distortion exactly the budget."""
        cov = np.atleast_2d(np.asarray(u_cov, dtype=float))
        t = np.clip(budgets / max(float(np.trace(cov)), 1e-12), 0.0, 1.0)
        w, v = np.linalg.eigh(cov)
        root = torch.as_tensor((v * np.sqrt(np.clip(w, 0, None))).T, dtype=torch.float32)
        return t, root, self.w_shift[0, 0, -self.d_u:].clone()

    def _start_scale(self, budgets: np.ndarray) -> torch.Tensor:
        """Per-member noise scale sqrt(budget / d_u): the Gaussian-noise baseline, (k,)."""
        return torch.as_tensor(np.maximum(np.sqrt(budgets / self.d_u), MIN_SCALE), dtype=torch.float32)


class LinearRelease(SweepRelease):
    """Z = W M (+ c) + eps L; starts at the shrink-and-noise release (see ``_setup``)."""

    def __init__(self, k: int, cfg: dict[str, Any]) -> None:
        super().__init__(k, cfg)
        self.M = nn.Parameter(torch.zeros(k, self.d_w, self.d_u))
        self.L = nn.Parameter(torch.zeros(k, self.d_u, self.d_u))
        self.c = nn.Parameter(torch.zeros(k, 1, self.d_u)) if cfg.get("bias", False) else None

    def _setup(self, budgets: np.ndarray, u_cov: np.ndarray | None) -> None:
        """Start at Z = (1-t) U + t E[U] + N(0, t(1-t) cov_u), t = budget / tr(cov_u) (<= 1):
        distortion exactly the budget (the optimum of PPAN Prop 1 for a scalar U);
        without ``u_cov``, at Z = U + N(0, budget/d_u I)."""
        eye = torch.eye(self.d_u)
        self.M.zero_()
        if u_cov is None:
            self.M[:, -self.d_u:, :] = eye
            self.L.copy_(self._start_scale(budgets)[:, None, None] * eye)
            return
        t, root, mean_u = self._shrink(budgets, u_cov)
        for i, ti in enumerate(t):
            self.M[i, -self.d_u:, :] = (1.0 - ti) * eye
            self.L[i] = math.sqrt(max(ti * (1.0 - ti), MIN_SCALE ** 2)) * root
        if self.c is not None:
            self.c.copy_(torch.as_tensor(t, dtype=torch.float32)[:, None, None] * mean_u)

    def forward(self, w, gen):
        z = torch.bmm(w, self.M) + torch.bmm(self._randn(w.shape[:2] + (self.d_u,), gen, w), self.L)
        if self.c is not None:
            z = z + self.c
        return z[:, :, None, :], None

    def linear_gaussian(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(A, B, noise_cov) of member 0: Z = A U + B S + N(0, noise_cov)."""
        M = self.M[0].detach().double().cpu().numpy()
        L = self.L[0].detach().double().cpu().numpy()
        return M[-self.d_u:].T, M[: self.d_w - self.d_u].T, L.T @ L


class GaussianRelease(SweepRelease):
    """§II-C2: Z = U + mu(W) + A(W) eps, mu = W S + c + MLP_mu(W), A = A0 + MLP_A(W).

    The affine part (S, c, A0) starts like :class:`LinearRelease`; the MLP's last layer
    starts small, so the network begins at the linear start and learns corrections.
    """

    def __init__(self, k: int, cfg: dict[str, Any]) -> None:
        super().__init__(k, cfg)
        sizes = [self.d_w, *cfg["hidden"], self.d_u + self.d_u * self.d_u]
        self.net = SweepMLP(k, sizes, cfg.get("activation", "relu"))
        self.S = nn.Parameter(torch.zeros(k, self.d_w, self.d_u))
        self.c = nn.Parameter(torch.zeros(k, 1, self.d_u))
        self.A0 = nn.Parameter(torch.zeros(k, self.d_u, self.d_u))

    def _setup(self, budgets: np.ndarray, u_cov: np.ndarray | None) -> None:
        last = self.net.net[-1]
        last.weight.mul_(0.1)
        last.bias.zero_()
        _affine_start(self, budgets, u_cov)
        if u_cov is None:
            self.A0.copy_(self._start_scale(budgets)[:, None, None] * torch.eye(self.d_u))
        else:
            t, root, _ = self._shrink(budgets, u_cov)
            for i, ti in enumerate(t):
                self.A0[i] = math.sqrt(max(ti * (1.0 - ti), MIN_SCALE ** 2)) * root.T

    def forward(self, w, gen):
        out = self.net(self._norm(w))
        k, n = w.shape[:2]
        mu = out[..., : self.d_u] + torch.bmm(w, self.S) + self.c
        A = out[..., self.d_u:].reshape(k, n, self.d_u, self.d_u) + self.A0[:, None]
        eps = self._randn((k, n, self.d_u), gen, w)
        z = self._u(w) + mu + (A @ eps[..., None])[..., 0]
        return z[:, :, None, :], None


@torch.no_grad()
def _affine_start(module: "GaussianRelease | GMMRelease", budgets: np.ndarray, u_cov: np.ndarray | None) -> None:
    """Affine mean part U + W S + c = (1-t) U + t E[U] (shrink start), or U (noise start)."""
    module.S.zero_()
    module.c.zero_()
    if u_cov is None:
        return
    t, _, mean_u = module._shrink(budgets, u_cov)
    tt = torch.as_tensor(t, dtype=torch.float32)
    module.S[:, -module.d_u:, :] = -tt[:, None, None] * torch.eye(module.d_u)
    module.c.copy_(tt[:, None, None] * mean_u)


class SeedRelease(SweepRelease):
    """§II-C3: Z = [U +] f(W, eps), eps ~ Uniform[-1, 1]^n_noise (``seed_noise="uniform"``) or N(0, I).

    ``affine``: Z = W M + c + eps L + f(W, eps), the MLP's last layer started at zero and
    the affine part at the shrink-and-noise release of :class:`LinearRelease`: the
    optimal linear-Gaussian release (reverse water-filling, Props 1-3) and the constant
    release are in the family with f = 0 (with Gaussian seed noise), and training starts
    inside the linear family instead of having to build it from ReLUs.
    """

    def __init__(self, k: int, cfg: dict[str, Any]) -> None:
        super().__init__(k, cfg)
        self.n_noise = int(cfg["n_noise"])
        self.residual = bool(cfg.get("residual", True))
        self.affine = bool(cfg.get("affine", False))
        self.gaussian = cfg.get("seed_noise", "uniform") == "gaussian"
        self.net = SweepMLP(k, [self.d_w + self.n_noise, *cfg["hidden"], self.d_u], cfg.get("activation", "relu"))
        if self.affine:
            self.M = nn.Parameter(torch.zeros(k, self.d_w, self.d_u))
            self.c = nn.Parameter(torch.zeros(k, 1, self.d_u))
            self.L = nn.Parameter(torch.zeros(k, self.n_noise, self.d_u))

    def _setup(self, budgets: np.ndarray, u_cov: np.ndarray | None) -> None:
        if not self.affine:
            return
        last = self.net.net[-1]
        last.weight.zero_()
        last.bias.zero_()
        self.M.zero_()
        self.c.zero_()
        self.L.zero_()
        eye, d = torch.eye(self.d_u), min(self.d_u, self.n_noise)
        if u_cov is None:
            self.M[:, -self.d_u:, :] = eye
            self.L[:, :d, :] = self._start_scale(budgets)[:, None, None] * eye[:d]
            return
        t, root, mean_u = self._shrink(budgets, u_cov)
        for i, ti in enumerate(t):
            self.M[i, -self.d_u:, :] = (1.0 - ti) * eye
            self.L[i, :d, :] = math.sqrt(max(ti * (1.0 - ti), MIN_SCALE ** 2)) * root[:d]
        self.c.copy_(torch.as_tensor(t, dtype=torch.float32)[:, None, None] * mean_u)

    def forward(self, w, gen):
        k, n = w.shape[:2]
        if self.gaussian:
            eps = self._randn((k, n, self.n_noise), gen, w)
        else:
            eps = 2.0 * Streams.of(gen, k).rand((k, n, self.n_noise), w) - 1.0
        z = self.net(torch.cat([self._norm(w), eps], dim=-1))
        self.last_residual = z  # f(W, eps) of this call, (k, n, d_u): its power is penalised in training
        if self.affine:
            z = z + torch.bmm(w, self.M) + self.c + torch.bmm(eps, self.L)
        elif self.residual:
            z = z + self._u(w)
        return z[:, :, None, :], None


class GMMRelease(SweepRelease):
    """Appendix F: m components, Z = U + mu_l(W) + s_l(W) * eps, weights pi_l(W) (diagonal s_l)."""

    def __init__(self, k: int, cfg: dict[str, Any]) -> None:
        super().__init__(k, cfg)
        self.m = int(cfg["n_components"])
        sizes = [self.d_w, *cfg["hidden"], self.m * (2 * self.d_u + 1)]
        self.net = SweepMLP(k, sizes, cfg.get("activation", "relu"))
        self.S = nn.Parameter(torch.zeros(k, self.d_w, self.d_u))  # affine part shared by the components
        self.c = nn.Parameter(torch.zeros(k, 1, self.d_u))

    def _setup(self, budgets: np.ndarray, u_cov: np.ndarray | None) -> None:
        last = self.net.net[-1]
        last.weight.mul_(0.1)
        m, d = self.m, self.d_u
        bias = last.bias.view(self.k, m, 2 * d + 1)
        bias[..., :d] *= 0.3  # distinct component means
        _affine_start(self, budgets, u_cov)
        if u_cov is None:
            log_scale = torch.log(self._start_scale(budgets))[:, None, None]
        else:
            t, _, _ = self._shrink(budgets, u_cov)
            var = np.outer(np.maximum(t * (1 - t), MIN_SCALE ** 2), np.diag(np.atleast_2d(u_cov)))
            log_scale = torch.as_tensor(0.5 * np.log(np.maximum(var, 1e-12)), dtype=torch.float32)[:, None, :]
        bias[..., d: 2 * d] = log_scale
        bias[..., 2 * d] = 0.0

    def _parts(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        k, n = w.shape[:2]
        out = self.net(self._norm(w)).reshape(k, n, self.m, 2 * self.d_u + 1)
        mean = (self._u(w) + torch.bmm(w, self.S) + self.c)[:, :, None, :] + out[..., : self.d_u]
        scale = torch.exp(out[..., self.d_u: 2 * self.d_u].clamp(-12.0, 6.0))
        return mean, scale, torch.softmax(out[..., -1], dim=-1)

    def forward(self, w, gen):
        mean, scale, pi = self._parts(w)
        return mean + scale * self._randn(mean.shape, gen, w), pi

    def sample(self, w, gen):
        mean, scale, pi = self._parts(w)
        k, n = w.shape[:2]
        comp = Streams.of(gen, k).multinomial(pi.reshape(k * n, self.m), n).reshape(k, n, 1, 1)
        pick = lambda t: torch.gather(t, 2, comp.expand(k, n, 1, self.d_u))[:, :, 0, :]  # noqa: E731
        return pick(mean) + pick(scale) * self._randn((k, n, self.d_u), gen, w)


MODULES: dict[str, type[SweepRelease]] = {
    "linear": LinearRelease, "gaussian": GaussianRelease, "seed": SeedRelease, "gmm": GMMRelease,
}


def build_release(k: int, cfg: dict[str, Any]) -> SweepRelease:
    """A k-member release module for the architecture ``cfg`` (JSON-able, see :class:`PPANNet`)."""
    family = cfg.get("family")
    if family not in MODULES:
        raise InputError(f"mechanism family={family!r} is unknown (allowed: {', '.join(FAMILIES)})")
    return MODULES[family](k, cfg)


def member_tensors(module: SweepRelease, i: int) -> dict[str, torch.Tensor]:
    """Member ``i``'s parameters and buffers as a k = 1 state dict (CPU copies)."""
    return {name: t[i: i + 1].detach().cpu().clone() for name, t in module.state_dict().items()}
