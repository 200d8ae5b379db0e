"""Fixtures shared by the theory tests."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest


@pytest.fixture
def sparse_joint() -> Callable[..., np.ndarray]:
    """make(seed, n_s, n, zeros=False): a Dirichlet(1/2) joint P(S, U) of shape (n_s, n); with ``zeros``, a
    sensitive value that never occurs and entries of probability 0 (about a fifth)."""

    def make(seed: int, n_s: int, n: int, zeros: bool = False) -> np.ndarray:
        rng = np.random.default_rng(seed)
        joint = rng.dirichlet(np.full(n_s * n, 0.5)).reshape(n_s, n)
        if zeros:
            joint[0] = 0.0
            joint[rng.random(joint.shape) < 0.2] = 0.0
            joint /= joint.sum()
        return joint

    return make
