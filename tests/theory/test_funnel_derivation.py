"""The privacy-funnel derivation, checked by brute force over channels (independent of theory/funnel).

For a finite model and W (useful: W = U; full: W = (S, U)), every channel P(Z | W) is a
split of P_W into posteriors q_z with weights p(z), and

    I(S; Z) - beta I(U; Z) = H(S) - beta H(U) - sum_z p(z) g_beta(q_z),  g_beta(q) = H(A_S q) - beta H(A_U q).

Checked here: the identity channel by channel; the min over all channels on a grid
against the envelope formula (an LP over a grid of posteriors, written here); and the
funnel sandwich of theory/funnel against the brute-force minimum of I(S; Z) subject to
H(U | Z) <= D over every channel of a grid with |Z| = |W| + 1 (room for time sharing).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.special import entr

from privbench.theory.funnel import funnel_sandwich, split_model


def _h(p, axis=-1):
    return entr(np.clip(p, 0, None)).sum(axis=axis)


def _simplex_grid(n: int, steps: int) -> np.ndarray:
    pts = [c for c in itertools.product(range(steps + 1), repeat=n - 1) if sum(c) <= steps]
    return np.array([[*c, steps - sum(c)] for c in pts], dtype=float) / steps


def _channels(n_w: int, n_z: int, steps: int) -> np.ndarray:
    """Every channel whose rows lie on the grid, shape (K, n_w, n_z)."""
    rows = _simplex_grid(n_z, steps)
    idx = np.array(list(itertools.product(range(len(rows)), repeat=n_w)))
    return rows[idx]


def _model(joint: np.ndarray, observation: str) -> tuple[np.ndarray, np.ndarray]:
    """P(S, W) and P(U, W) of the observation model, written out directly."""
    n_s, n_u = joint.shape
    if observation == "useful":
        return joint.copy(), np.diag(joint.sum(axis=0))
    p_sw = np.zeros((n_s, n_s * n_u))
    p_uw = np.zeros((n_u, n_s * n_u))
    for s, u in itertools.product(range(n_s), range(n_u)):
        p_sw[s, s * n_u + u] = joint[s, u]
        p_uw[u, s * n_u + u] = joint[s, u]
    return p_sw, p_uw


def _informations(p_sw, p_uw, channels):
    """I(S; Z), I(U; Z) and H(U | Z) of each channel, from the joints P(S, Z), P(U, Z)."""
    p_sz = np.einsum("sw,kwz->ksz", p_sw, channels)
    p_uz = np.einsum("uw,kwz->kuz", p_uw, channels)
    p_z = p_sz.sum(axis=1)
    h_s, h_u = _h(p_sw.sum(axis=1)), _h(p_uw.sum(axis=1))
    h_s_z = _h(p_sz.reshape(len(channels), -1)) - _h(p_z)
    h_u_z = _h(p_uz.reshape(len(channels), -1)) - _h(p_z)
    return h_s - h_s_z, h_u - h_u_z, h_u_z


MODELS = {
    "binary-2x2": np.array([[0.56, 0.06], [0.14, 0.24]]),
    "skewed-2x2": np.array([[0.45, 0.15], [0.05, 0.35]]),
    "2x3": np.array([[0.30, 0.10, 0.05], [0.05, 0.20, 0.30]]),
    "3x3": np.array([[0.25, 0.05, 0.03], [0.04, 0.20, 0.08], [0.06, 0.04, 0.25]]),
}


@pytest.mark.parametrize("name,observation", [("binary-2x2", "useful"), ("2x3", "useful"), ("3x3", "useful"),
                                              ("binary-2x2", "full")])
def test_split_identity_channel_by_channel(name, observation):
    joint = MODELS[name]
    p_sw, p_uw = _model(joint, observation)
    n_w = p_sw.shape[1]
    rng = np.random.default_rng(17)
    channels = rng.dirichlet(np.ones(n_w + 1), size=(200, n_w))
    i_s, i_u, _ = _informations(p_sw, p_uw, channels)
    p_w = p_sw.sum(axis=0)
    a_s, a_u = p_sw / p_w, p_uw / p_w
    for beta in (0.0, 0.4, 1.0, 2.5):
        p_z = np.einsum("w,kwz->kz", p_w, channels)
        q = np.einsum("w,kwz->kzw", p_w, channels) / p_z[:, :, None]  # posteriors P(W | Z = z)
        g = _h(q @ a_s.T) - beta * _h(q @ a_u.T)
        rhs = _h(p_sw.sum(axis=1)) - beta * _h(p_uw.sum(axis=1)) - (p_z * g).sum(axis=1)
        np.testing.assert_allclose(i_s - beta * i_u, rhs, atol=1e-12)


def _envelope(g_values, points, p_w):
    """Upper concave envelope at p_w of a function known on ``points`` (LP)."""
    res = linprog(-g_values, A_eq=points.T, b_eq=p_w, bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("name,steps,q_steps", [("skewed-2x2", 120, 2000), ("2x3", 10, 120)])
def test_lagrangian_minimum_is_the_envelope_formula(name, steps, q_steps):
    """min over a grid of channels (|Z| = |W|) of I(S;Z) - beta I(U;Z) vs H(S) - beta H(U) - conc g_beta(P_W).
    Both are grid values of the same minimum from above: they agree to the coarser grid's resolution."""
    joint = MODELS[name]
    p_sw, p_uw = _model(joint, "useful")
    n_w = p_sw.shape[1]
    channels = _channels(n_w, n_w, steps)
    i_s, i_u, _ = _informations(p_sw, p_uw, channels)
    p_w = p_sw.sum(axis=0)
    q = _simplex_grid(n_w, q_steps)
    a_s, a_u = p_sw / p_w, p_uw / p_w
    for beta in (0.3, 1.0, 1.7, 3.0):
        brute = float((i_s - beta * i_u).min())
        conc = _envelope(_h(q @ a_s.T) - beta * _h(q @ a_u.T), q, p_w)
        formula = _h(p_sw.sum(axis=1)) - beta * _h(p_uw.sum(axis=1)) - conc
        assert brute == pytest.approx(formula, abs=2e-3), beta


@pytest.mark.parametrize("name,observation,steps", [("skewed-2x2", "useful", 40), ("2x3", "useful", 6),
                                                     ("binary-2x2", "full", 3)])
def test_funnel_sandwich_brackets_the_brute_force_minimum(name, observation, steps):
    """lower <= brute-force min I(S;Z) s.t. H(U|Z) <= D (any grid channel is a mechanism), and the
    achievable end is no worse than the brute force beyond the sandwich's width."""
    joint = MODELS[name]
    p_sw, p_uw = _model(joint, observation)
    n_w = p_sw.shape[1]
    channels = _channels(n_w, n_w + 1 if n_w < 4 else n_w, steps)
    i_s, _, h_u_z = _informations(p_sw, p_uw, channels)
    split = split_model(joint, observation)
    for budget in (0.0, 0.15, 0.35, 0.55):
        ok = h_u_z <= budget + 1e-12
        brute = float(i_s[ok].min())
        got = funnel_sandwich(split, joint, observation, budget, "mi", tol=1e-4, time_limit=30)
        assert got["lower"] <= brute + 1e-9
        assert got["upper"] <= brute + got["width"] + 1e-9
        assert got["width"] <= 1e-4
        # the achievable end is the exact I(S;Z) of its channel, which meets the budget
        i_s_c, _, h_c = _informations(p_sw, p_uw, got["channel"][None])
        assert i_s_c[0] == pytest.approx(got["upper"], abs=1e-12)
        assert h_c[0] <= budget + 1e-12
