"""Ground-truth leakage tasks: releases whose I(S;Z) (and MAP accuracy) is known independently.

Each task draws S, a noisy copy Y = S + N (Gaussian noise), and releases Z = T(Y) with T
invertible, so that I(S;Z) = I(S;Y), which is a closed form (Gaussian S:
1/2 log det(C_S + C_N) - 1/2 log det C_N) or a one-dimensional quadrature (binary S,
Cauchy S, a hidden sign).  The truth never comes from the bench's evaluators: it is
computed here from the model with numpy/scipy only.

Transforms (bmi-style, all invertible):

- ``spiral``: rotate the first two coordinates by an angle ``speed * |y|`` (|y| unchanged; speed 0.5
  turns the bulk of the data by up to about a radian, 1.5 by up to a full turn);
- ``half-cube``: y * sqrt(|y|) per coordinate;
- ``normal-cdf``: Phi(y / 1.5) per coordinate (a release in (0, 1));
- ``sparse``: triangular interactions z_i = y_i + 0.8 y_(i-1) y_(i-2) (z_1 = y_1, z_2 = y_2 + 0.5 y_1^2);
- ``identity``.

Special tasks: ``cauchy`` (heavy-tailed S, for the credibility rule), ``hidden-sign`` (Gaussian S
whose sign is written into Y's digits below 1e-6: ``floor(y / 1e-6) * 1e-6 + (0.25 or 0.75) *
1e-6``) and ``binary-hidden`` (binary S, the label written the same way: MAP accuracy 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, special, stats

HIDE_SCALE = 1e-6


@dataclass(frozen=True)
class TruthTask:
    """One ground-truth task.

    Attributes
    ----------
    name : str
    s_kind : {"gaussian", "binary", "cauchy"}
    dim : int
        Dimension of S, Y and Z (1 to 5).
    transform : str
        See the module docstring.
    noise : float
        Standard deviation of each coordinate of N (S has unit scale).
    hide : bool
        Write S's sign (or label) into the digits of Y below :data:`HIDE_SCALE`.
    mu : float
        Binary S: Y = mu (2 S - 1) + N in the first coordinate (the others pure noise).
    speed : float
        The spiral's angle per unit radius.
    """

    name: str
    s_kind: str
    dim: int
    transform: str
    noise: float
    hide: bool = False
    mu: float = 1.0
    speed: float = field(default=0.5)

    # ------------------------------------------------------------------ truth
    @property
    def mi(self) -> float:
        """I(S;Z) in nats (closed form or quadrature)."""
        if self.s_kind == "gaussian":
            base = 0.5 * self.dim * math.log1p(1.0 / self.noise**2)
            return base + (hidden_sign_entropy(self.noise) if self.hide else 0.0)
        if self.s_kind == "binary":
            return math.log(2) if self.hide else binary_mi(self.mu, self.noise)
        return cauchy_mi(self.noise)

    @property
    def map(self) -> float | None:
        """The MAP accuracy of guessing a binary S (prior 1/2) from Z; None for a continuous S."""
        if self.s_kind != "binary":
            return None
        return 1.0 if self.hide else float(special.ndtr(self.mu / self.noise))

    @property
    def h_s(self) -> float:
        """Entropy of S (differential for a continuous S)."""
        if self.s_kind == "gaussian":
            return 0.5 * self.dim * math.log(2 * math.pi * math.e)
        return math.log(2) if self.s_kind == "binary" else math.log(4 * math.pi)

    # ------------------------------------------------------------------ samples
    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, z, log p(s)): s (n, dim) floats or (n,) labels, z (n, dim), the true log-density of each s."""
        if self.s_kind == "binary":
            s = rng.integers(0, 2, n)
            y = self.noise * rng.standard_normal((n, self.dim))
            y[:, 0] += self.mu * (2 * s - 1)
            log_p = np.full(n, -math.log(2))
            flag = s == 1
        else:
            s = rng.standard_normal((n, self.dim)) if self.s_kind == "gaussian" else rng.standard_cauchy((n, 1))
            y = s + self.noise * rng.standard_normal(s.shape)
            log_p = (stats.norm.logpdf(s).sum(axis=1) if self.s_kind == "gaussian" else stats.cauchy.logpdf(s[:, 0]))
            flag = s[:, 0] > 0
        if self.hide:
            y = np.floor(y / HIDE_SCALE) * HIDE_SCALE
            y[:, 0] += HIDE_SCALE * np.where(flag, 0.75, 0.25)
        return s, transform(y, self.transform, self.speed), log_p


def transform(y: np.ndarray, kind: str, speed: float = 0.5) -> np.ndarray:
    """An invertible map of the rows of ``y`` (n, d) (module docstring)."""
    z = y.copy()
    if kind == "spiral" and y.shape[1] >= 2:
        a = speed * np.sqrt((y * y).sum(axis=1))
        c, s = np.cos(a), np.sin(a)
        z[:, 0], z[:, 1] = c * y[:, 0] - s * y[:, 1], s * y[:, 0] + c * y[:, 1]
    elif kind == "half-cube":
        z = y * np.sqrt(np.abs(y))
    elif kind == "normal-cdf":
        z = special.ndtr(y / 1.5)
    elif kind == "sparse":
        for i in range(1, y.shape[1]):
            z[:, i] = y[:, i] + (0.5 * y[:, 0] ** 2 if i == 1 else 0.8 * y[:, i - 1] * y[:, i - 2])
    elif kind != "identity":
        raise ValueError(f"transform={kind!r} unknown")
    return z


def hidden_sign_entropy(noise: float) -> float:
    """H(sign S | Y) for scalar S ~ N(0, 1), Y = S + N(0, noise^2): I(S; Y, sign S) - I(S; Y)."""
    var_y = 1 + noise**2
    post_sd = math.sqrt(noise**2 / var_y)

    def f(y: float) -> float:
        p = float(special.ndtr((y / var_y) / post_sd))
        h = -sum(q * math.log(q) for q in (p, 1 - p) if q > 0)
        return h * stats.norm.pdf(y, scale=math.sqrt(var_y))

    return float(integrate.quad(f, -12 * math.sqrt(var_y), 12 * math.sqrt(var_y), limit=400)[0])


def binary_mi(mu: float, noise: float) -> float:
    """I(S; Y) for S uniform on {0, 1}, Y = mu (2 S - 1) + N(0, noise^2): log 2 - E H(S | Y)."""

    def f(y: float) -> float:
        a, b = stats.norm.pdf(y, -mu, noise), stats.norm.pdf(y, mu, noise)
        tot = a + b
        return -0.5 * sum(x * math.log(x / tot) for x in (a, b) if x > 0)

    lim = mu + 12 * noise
    return math.log(2) - float(integrate.quad(f, -lim, lim, limit=400)[0])


def cauchy_mi(noise: float) -> float:
    """I(S; S + N) for a standard Cauchy S and N ~ N(0, noise^2): h(Y) - h(N), Y's density the Voigt profile."""

    def f(y: float) -> float:
        p = float(special.voigt_profile(y, noise, 1.0))
        return -p * math.log(p) if p > 0 else 0.0

    h_y = sum(float(integrate.quad(f, a, b, limit=800)[0]) for a, b in ((-np.inf, -50), (-50, 50), (50, np.inf)))
    return h_y - 0.5 * math.log(2 * math.pi * math.e * noise**2)


#: The measured set (scripts/groundtruth_table.py): continuous S in 1 to 5 dimensions, binary S, and the
#: two special cases.  Noise levels put I(S;Z) between about 0.2 and 1.5 nats.
TASKS: tuple[TruthTask, ...] = (
    TruthTask("gauss-1-identity", "gaussian", 1, "identity", 0.8),
    TruthTask("gauss-1-half-cube", "gaussian", 1, "half-cube", 0.6),
    TruthTask("gauss-2-spiral", "gaussian", 2, "spiral", 0.8),
    TruthTask("gauss-3-spiral", "gaussian", 3, "spiral", 1.0),
    TruthTask("gauss-3-spiral-fast", "gaussian", 3, "spiral", 1.0, speed=1.5),
    TruthTask("gauss-3-normal-cdf", "gaussian", 3, "normal-cdf", 1.0),
    TruthTask("gauss-4-sparse", "gaussian", 4, "sparse", 1.2),
    TruthTask("gauss-5-half-cube", "gaussian", 5, "half-cube", 1.5),
    TruthTask("gauss-5-spiral", "gaussian", 5, "spiral", 1.5),
    TruthTask("gauss-5-spiral-fast", "gaussian", 5, "spiral", 1.5, speed=1.5),
    TruthTask("binary-1-half-cube", "binary", 1, "half-cube", 1.0),
    TruthTask("binary-3-spiral", "binary", 3, "spiral", 1.0),
    TruthTask("cauchy-1-identity", "cauchy", 1, "identity", 1.0),
    TruthTask("gauss-1-hidden-sign", "gaussian", 1, "identity", 0.8, hide=True),
    TruthTask("binary-1-hidden", "binary", 1, "identity", 1.0, hide=True),
)
BY_NAME = {t.name: t for t in TASKS}
