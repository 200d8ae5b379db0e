"""Closed-form optimal tradeoffs for Gaussian scenarios: MI privacy, MSE distortion.

Problem: minimise I(S;Z) (nats) over mechanisms P(Z|W) subject to
E||U - Z||^2 <= D, with (S, U) zero-mean jointly Gaussian. PPAN's X is our S,
PPAN's Y is our U; observation ``useful`` is W = U, ``full`` is W = (S, U).

==================  ===========  ==================================================
scenario            observation  optimum I*(D)
==================  ===========  ==================================================
gaussian-scalar     useful       PPAN Prop 1: max(0, -1/2 log(1 - r^2 + r^2 D/v_u))
gaussian-scalar     full         PPAN Prop 3, generalised (see :func:`scalar_full_mi`)
gaussian-vector     useful       PPAN Prop 2, modified water-filling, needs cov_u = cI
gaussian-source     (ignored)    reverse water-filling R(D)
==================  ===========  ==================================================

Every optimal mechanism here is linear-Gaussian, Z = A U + B S + N(0, noise_cov);
:func:`linear_gaussian_leakage` computes its exact I(S;Z) and MSE. Curves are
vectorised over budgets (no Python loop over budgets).

Corrections to the paper (each checked in ``tests/theory/test_gaussian.py``):

* Prop 3's mechanism (27) holds only for D < rho^2 (unit variances): for
  rho^2 < D <= 1 it over-rotates Z past orthogonality and leaks again, for D > 1
  it is undefined, and at rho = 1 it divides by zero. For D >= rho^2 v_u an
  optimal release is Z = U - E[U|S] (zero leakage, distortion rho^2 v_u).
* Prop 2: delta'_i = min{1, t - (rho'_i^-2 - 1)} must also be clipped at 0
  (as in the proof's KKT equation).
* Prop 2's condition V_P^T Sigma_U V_P = c I_n, with V_P the n x n orthogonal
  factor of the SVD, is equivalent to Sigma_U = c I_n (cov_s arbitrary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import check_observation
from privbench.datasets.scenarios import GaussianScalar, GaussianSource, GaussianVector

from .base import Optimum, check_budget, check_budgets

RHO_ZERO = 1e-12  # canonical correlations below this are treated as exactly 0
CONDITION_RTOL = 1e-9  # relative tolerance of the Prop 2 check V^T cov_u V = c I
SINGULAR_RTOL = 1e-13  # whitened Var(S|Z) eigenvalue below this: S is determined, I = inf

METHODS = {
    "prop1": "closed form (PPAN Prop 1)",
    "prop3": "closed form (PPAN Prop 3, generalised to any variances and sign of rho)",
    "prop2": "closed form (PPAN Prop 2, modified water-filling)",
    "rd": "closed form (reverse water-filling R(D))",
}


# --------------------------------------------------------------------------
# exact leakage of a linear-Gaussian mechanism
# --------------------------------------------------------------------------


def linear_gaussian_leakage(cov: Any, A: Any, B: Any, noise_cov: Any) -> tuple[float, float]:
    """Exact I(S;Z) (nats) and E||U - Z||^2 of Z = A U + B S + N(0, noise_cov).

    Parameters
    ----------
    cov : array_like, shape (d_s + d_u, d_s + d_u)
        Joint covariance of (S, U), S first; cov_s must be positive definite.
    A : array_like, shape (d_u, d_u)
    B : array_like, shape (d_u, d_s)
    noise_cov : array_like, shape (d_u, d_u)
        Positive semi-definite covariance of the independent noise.

    Returns
    -------
    (mi, mse) : tuple of float
        ``mi`` uses I = 1/2 log det cov_s - 1/2 log det Var(S|Z), with Var(S|Z)
        from a pseudo-inverse on the range of cov_z (so a deterministic or zero Z
        is fine); ``mi`` is ``inf`` when Z determines a direction of S (whitened
        Var(S|Z) eigenvalue below 1e-13, i.e. beyond about 15 nats per dimension).
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    A = np.atleast_2d(np.asarray(A, dtype=float))
    B = np.atleast_2d(np.asarray(B, dtype=float))
    noise = np.atleast_2d(np.asarray(noise_cov, dtype=float))
    d_u, d_s = A.shape[1], B.shape[1]
    if cov.shape != (d_s + d_u, d_s + d_u) or A.shape[0] != d_u or B.shape[0] != d_u \
            or noise.shape != (d_u, d_u):
        raise InputError(
            f"shapes cov {cov.shape}, A {A.shape}, B {B.shape}, noise_cov {noise.shape} do not fit "
            "(need cov (d_s+d_u)^2, A (d_u, d_u), B (d_u, d_s), noise_cov (d_u, d_u))"
        )
    M = np.hstack([B, A])  # Z = M [S; U] + N
    cov_z = M @ cov @ M.T + noise
    cov_z = 0.5 * (cov_z + cov_z.T)
    cov_s = cov[:d_s, :d_s]
    cov_sz = cov[:d_s] @ M.T
    err = np.hstack([-B, np.eye(d_u) - A])  # U - Z = err [S; U] - N
    mse = float(np.trace(err @ cov @ err.T) + np.trace(noise))

    ws, vs = np.linalg.eigh(cov_s)
    whiten = vs / np.sqrt(ws)  # cov_s^{-1/2} up to rotation
    wz, vz = np.linalg.eigh(cov_z)
    ref = np.linalg.norm(M, 2) ** 2 * np.linalg.norm(cov, 2) + np.linalg.norm(noise, 2)
    keep = wz > 1e-12 * ref
    if not np.any(keep):
        return 0.0, mse
    g = whiten.T @ cov_sz @ vz[:, keep]  # whitened cross-covariance on range(cov_z)
    explained = np.linalg.eigvalsh((g / wz[keep]) @ g.T)  # eigenvalues of I - whitened Var(S|Z)
    resid = np.clip(1.0 - explained, 0.0, 1.0)
    if resid.min() <= SINGULAR_RTOL:
        return float("inf"), mse
    return float(-0.5 * np.sum(np.log(resid))), mse


# --------------------------------------------------------------------------
# scalar: PPAN Props 1 and 3
# --------------------------------------------------------------------------


def scalar_useful_mi(budgets: Any, rho: float, var_u: float = 1.0) -> np.ndarray:
    """PPAN Prop 1: I*(D) = max(0, -1/2 log(1 - rho^2 + rho^2 D / var_u)), W = U.

    Holds for any variances and rho in [-1, 1]; 0 for D >= var_u; ``inf`` at
    D = 0 when |rho| = 1.

    Parameters
    ----------
    budgets : array_like, shape (k,)
    Returns
    -------
    ndarray, shape (k,)
    """
    d = np.minimum(check_budgets(budgets) / var_u, 1.0)
    with np.errstate(divide="ignore"):
        return np.maximum(-0.5 * np.log1p(-(rho * rho) * (1.0 - d)), 0.0)


def scalar_full_mi(budgets: Any, rho: float, var_u: float = 1.0) -> np.ndarray:
    """PPAN Prop 3 generalised: optimal I(S;Z) with W = (S, U), scalar.

    With r = |rho| and d = D / var_u, the optimum is 0 for d >= r^2 and
    otherwise -log(sqrt((1 - r^2)(1 - d)) + r sqrt(d)), which equals the
    paper's eq (28), 1/2 log 1/(1 - (sqrt(r^2(1-d)) - sqrt((1-r^2)d))^2), since
    the two square roots are the cosine and sine of the same angle.

    Generalisation: I(S;Z) is invariant to scaling S and flipping its sign, so
    var_s and sign(rho) do not matter; scaling U (and Z) by sigma_u scales the
    MSE by var_u, hence d = D / var_u. At |rho| = 1 this is -1/2 log d, the
    rate-distortion function (equal to Prop 1).

    Parameters
    ----------
    budgets : array_like, shape (k,)
    Returns
    -------
    ndarray, shape (k,)
    """
    r = abs(float(rho))
    d = np.minimum(check_budgets(budgets) / var_u, r * r)
    s = np.sqrt((1.0 - r * r) * (1.0 - d)) + r * np.sqrt(d)  # sin of the angle between S and Z
    with np.errstate(divide="ignore"):
        return np.maximum(-np.log(s), 0.0)


def scalar_mechanism(sc: GaussianScalar, budget: float, observation: str) -> dict[str, Any]:
    """An optimal release Z = a U + b S + N(0, v) for a scalar scenario.

    ``useful`` (Prop 1), d = D / var_u: a = 1 - d, b = 0, v = var_u d (1 - d)
    for d < 1; Z = 0 for d >= 1. ``full`` (Prop 3 generalised), r = |rho|:
    for d < r^2 and r < 1, a = 1 - d + r k, b = -sign(rho) k sigma_u / sigma_s,
    v = 0, with k = sqrt(d (1 - d) / (1 - r^2)) (the paper's eq (27) rescaled);
    at r = 1 Prop 1's mechanism; for d >= r^2 the zero-leakage release with the
    least distortion, Z = U - E[U|S] (a = 1, b = -rho sigma_u / sigma_s, v = 0,
    distortion r^2 var_u).

    Returns
    -------
    dict
        ``a``, ``b``, ``noise_var`` and ``distortion`` (E(U - Z)^2 of this Z).
    """
    r, vu = abs(sc.rho), sc.var_u
    d = budget / vu
    sgn = 1.0 if sc.rho >= 0 else -1.0
    ratio = np.sqrt(vu / sc.var_s)
    if observation == "useful" or r == 1.0:
        if d >= 1.0:  # (at |rho| = 1, U - E[U|S] is this same Z = 0)
            return {"a": 0.0, "b": 0.0, "noise_var": 0.0, "distortion": vu}
        return {"a": 1.0 - d, "b": 0.0, "noise_var": vu * d * (1.0 - d), "distortion": budget}
    if d >= r * r:
        return {"a": 1.0, "b": -sc.rho * ratio, "noise_var": 0.0, "distortion": r * r * vu}
    k = np.sqrt(d * (1.0 - d) / (1.0 - r * r))
    return {"a": float(1.0 - d + r * k), "b": float(-sgn * k * ratio), "noise_var": 0.0,
            "distortion": budget}


# --------------------------------------------------------------------------
# piecewise-linear allocations (water-filling), vectorised over budgets
# --------------------------------------------------------------------------


def _interp_allocation(budgets: np.ndarray, total: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Invert a piecewise-linear allocation known at its breakpoints.

    ``table[j]`` is the allocation (shape (k,)) at breakpoint j and ``total[j]``
    its sum, non-decreasing in j. Between breakpoints the allocation is linear in
    its total, so allocation(budget) is np.interp per component, shape (n, k).
    Repeated totals (flat stretches, where the allocation does not change) are
    dropped first; budgets beyond the last breakpoint get the last row.
    """
    total, first = np.unique(total, return_index=True)
    table = table[first]
    if total.size == 1:
        return np.broadcast_to(table[0], (budgets.size, table.shape[1])).copy()
    return np.column_stack([np.interp(budgets, total, table[:, i]) for i in range(table.shape[1])])


def waterfill_allocation(budgets: Any, rho: Any) -> np.ndarray:
    """PPAN Prop 2 allocation delta'_i(B) = max{0, min{1, t - (rho_i^-2 - 1)}}, sum = B.

    Parameters
    ----------
    budgets : array_like, shape (n,)
        Total normalised budgets B = D / c (B >= number of nonzero rho: all 1).
    rho : array_like, shape (k,)
        Canonical correlations in [0, 1]; entries <= 1e-12 get delta' = 0.

    Returns
    -------
    ndarray, shape (n, k)
        The allocation. Each breakpoint (t = a_p or a_p + 1, a = rho^-2 - 1)
        is evaluated as (a_p - a_i) + offset so that tiny correlations (huge a)
        lose no precision.
    """
    b = check_budgets(budgets)
    r = np.abs(np.asarray(rho, dtype=float)).ravel()
    out = np.zeros((b.size, r.size))
    live = r > RHO_ZERO
    if not np.any(live):
        return out
    inv2 = 1.0 / r[live] ** 2
    p = np.repeat(np.arange(inv2.size), 2)
    off = np.tile([0.0, 1.0], inv2.size)
    order = np.argsort(inv2[p] + off, kind="stable")
    p, off = p[order], off[order]
    table = np.clip(inv2[p][:, None] - inv2[None, :] + off[:, None], 0.0, 1.0)
    out[:, live] = _interp_allocation(b, table.sum(axis=1), table)
    return out


def _leak(rho: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """sum_i -1/2 log(1 - rho_i^2 (1 - delta_i)), shape (n,), for alloc (n, k)."""
    with np.errstate(divide="ignore"):
        return np.maximum(-0.5 * np.log1p(-(rho * rho) * (1.0 - alloc)).sum(axis=1), 0.0)


def reverse_waterfill(budgets: Any, variances: Any) -> np.ndarray:
    """Per-component distortions D_i = min(theta, sigma_i^2) with sum D_i = min(D, sum sigma^2).

    Parameters
    ----------
    budgets : array_like, shape (n,)
    variances : array_like, shape (k,)

    Returns
    -------
    ndarray, shape (n, k)
    """
    b = check_budgets(budgets)
    var = np.asarray(variances, dtype=float).ravel()
    theta = np.concatenate([[0.0], np.unique(var)])
    table = np.minimum(theta[:, None], var[None, :])
    return _interp_allocation(b, table.sum(axis=1), table)


def source_mi(budgets: Any, variances: Any) -> np.ndarray:
    """R(D) = sum_i 1/2 log(sigma_i^2 / D_i) (reverse water-filling), shape (n,); inf at D = 0."""
    var = np.asarray(variances, dtype=float).ravel()
    dist = reverse_waterfill(budgets, var)
    with np.errstate(divide="ignore"):
        return np.maximum(-0.5 * np.log(dist / var).sum(axis=1), 0.0)


# --------------------------------------------------------------------------
# vector: PPAN Prop 2
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Canonical:
    """The reparameterisation of PPAN Prop 2 for a vector scenario.

    Attributes
    ----------
    c : float
        The constant in V_P^T cov_u V_P = c I_n.
    rho : ndarray, shape (min(d_s, d_u),)
        Singular values of P = cov_s^-1/2 cov_su cov_u^-1/2 (canonical
        correlations), clipped to [0, 1]; values <= 1e-12 set to 0.
    v_p : ndarray, shape (d_u, d_u)
        Right singular vectors (orthogonal): U' = V_P^T cov_u^-1/2 U.
    sqrt_u, isqrt_u : ndarray, shape (d_u, d_u)
        cov_u^{1/2} and cov_u^{-1/2} (symmetric).
    """

    c: float
    rho: np.ndarray
    v_p: np.ndarray
    sqrt_u: np.ndarray
    isqrt_u: np.ndarray


def _sym_pow(mat: np.ndarray, power: float) -> np.ndarray:
    w, v = np.linalg.eigh(mat)
    return (v * w**power) @ v.T


def canonical_form(sc: GaussianVector) -> Canonical:
    """Reparameterise a vector scenario and check PPAN Prop 2's condition.

    Raises
    ------
    InputError
        When V_P^T cov_u V_P is not c I (equivalently cov_u is not a multiple of
        the identity, because V_P is square orthogonal): no closed form is known.
    """
    cs, cu, csu = (np.asarray(x, dtype=float) for x in (sc.cov_s, sc.cov_u, sc.cov_su))
    sqrt_u, isqrt_u = _sym_pow(cu, 0.5), _sym_pow(cu, -0.5)
    P = _sym_pow(cs, -0.5) @ csu @ isqrt_u
    _, sv, vt = np.linalg.svd(P, full_matrices=True)
    v_p = vt.T
    M = v_p.T @ cu @ v_p
    c = float(np.trace(M) / M.shape[0])
    dev = float(np.max(np.abs(M - c * np.eye(M.shape[0]))))
    if dev > CONDITION_RTOL * c:
        raise InputError(
            f"gaussian-vector {sc.id}: PPAN Prop 2 condition V_P^T cov_u V_P = c I fails "
            f"(largest deviation {dev:.3g}; it holds iff cov_u is a multiple of the identity); "
            "no known closed form for this model"
        )
    rho = np.clip(sv, 0.0, 1.0)
    rho[rho <= RHO_ZERO] = 0.0
    return Canonical(c=c, rho=rho, v_p=v_p, sqrt_u=sqrt_u, isqrt_u=isqrt_u)


def vector_useful_mi(budgets: Any, canon: Canonical) -> np.ndarray:
    """PPAN Prop 2: sum_i -1/2 log(1 - rho_i^2 + rho_i^2 delta'_i) at B = D / c, shape (n,)."""
    b = check_budgets(budgets) / canon.c
    return _leak(canon.rho, waterfill_allocation(b, canon.rho))


def vector_mechanism(sc: GaussianVector, canon: Canonical, budget: float) -> dict[str, Any]:
    """An optimal Z = A U + N(0, noise_cov) for Prop 2 at one budget.

    In canonical coordinates Z'_i = (1 - delta'_i) U'_i + N(0, delta'_i (1 - delta'_i)).
    Components of U' beyond min(d_s, d_u), and those with rho'_i = 0, are
    uncorrelated with every S'_j (the cross-covariance is diagonal), hence,
    being jointly Gaussian, independent of S' and of the other pairs: they get
    delta'_i = 0 and are released exactly, at no cost in distortion or leakage
    (the water-filling limit rho' -> 0 never gives them budget either). The
    paper assumes rho'_i > 0 and leaves these components unspecified.
    Back in original coordinates, with T = cov_u^{1/2} V_P:
    A = T diag(1 - delta') T^{-1}, noise_cov = T diag(delta'(1 - delta')) T^T.
    """
    d_s, d_u = sc.dims
    k = canon.rho.size
    alloc = np.zeros(d_u)
    alloc[:k] = waterfill_allocation([budget / canon.c], canon.rho)[0]
    T = canon.sqrt_u @ canon.v_p
    A = T @ np.diag(1.0 - alloc) @ canon.v_p.T @ canon.isqrt_u
    noise = T @ np.diag(alloc * (1.0 - alloc)) @ T.T
    return {
        "A": A.tolist(), "B": np.zeros((d_u, d_s)).tolist(), "noise_cov": noise.tolist(),
        "allocation": alloc.tolist(), "canonical_rho": canon.rho.tolist(), "c": canon.c,
        "v_p": canon.v_p.tolist(), "distortion": float(canon.c * alloc.sum()),
    }


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------


def _as_scalar(sc: GaussianVector) -> GaussianScalar:
    cs, cu, csu = sc.cov_s[0][0], sc.cov_u[0][0], sc.cov_su[0][0]
    return GaussianScalar(float(np.clip(csu / np.sqrt(cs * cu), -1.0, 1.0)), cs, cu)


def _route(scenario: Any, observation: str | None) -> tuple[str, Any]:
    """(kind, model): kind in prop1/prop3/prop2/rd, model the scalar/canonical/variances."""
    if isinstance(scenario, GaussianSource):
        return "rd", np.asarray(scenario.variances, dtype=float)
    if not isinstance(scenario, (GaussianScalar, GaussianVector)):
        raise InputError(
            f"scenario {getattr(scenario, 'id', scenario)!r} has no Gaussian closed form "
            "(allowed: gaussian-scalar, gaussian-vector, gaussian-source)"
        )
    check_observation(observation)  # type: ignore[arg-type]
    if isinstance(scenario, GaussianVector) and scenario.dims == (1, 1):
        scenario = _as_scalar(scenario)
    if isinstance(scenario, GaussianScalar):
        return ("prop1" if observation == "useful" else "prop3"), scenario
    if observation == "full":
        raise InputError(
            f"no known optimum for gaussian-vector with full observation ({scenario.id}); "
            "allowed: observation=useful (PPAN Prop 2)"
        )
    return "prop2", (scenario, canonical_form(scenario))


def gaussian_curve(scenario: Any, budgets: Any, observation: str | None) -> np.ndarray:
    """Optimal I(S;Z) in nats at each MSE budget, vectorised.

    Parameters
    ----------
    scenario : GaussianScalar, GaussianVector or GaussianSource
    budgets : array_like, shape (n,)
        MSE budgets D >= 0 (InputError for NaN, inf or negatives).
    observation : {"useful", "full"} or None
        Ignored for gaussian-source (S = U = W).

    Returns
    -------
    ndarray, shape (n,)
        ``inf`` where the optimum is infinite (D = 0 with a perfectly
        correlated component).
    """
    b = check_budgets(budgets)
    kind, model = _route(scenario, observation)
    if kind == "rd":
        return source_mi(b, model)
    if kind == "prop1":
        return scalar_useful_mi(b, model.rho, model.var_u)
    if kind == "prop3":
        return scalar_full_mi(b, model.rho, model.var_u)
    return vector_useful_mi(b, model[1])


def gaussian_optimum(scenario: Any, budget: float, observation: str | None) -> Optimum:
    """Optimal I(S;Z) at one MSE budget with an optimal linear-Gaussian mechanism.

    Returns
    -------
    Optimum
        ``bound_kind="exact"``; ``method`` names the proposition; ``mechanism``
        holds ``A`` (d_u, d_u), ``B`` (d_u, d_s), ``noise_cov`` (d_u, d_u) as
        nested lists for Z = A U + B S + N(0, noise_cov), plus ``distortion``
        (its MSE, <= budget; below the budget only where extra distortion cannot
        lower the leakage) and method-specific entries. ``value`` may be ``inf``.
    """
    budget = check_budget(budget)
    kind, model = _route(scenario, observation)
    value = float(gaussian_curve(scenario, [budget], observation)[0])
    mech: dict[str, Any] = {"type": "linear-gaussian", "observation": observation,
                            "form": "Z = A U + B S + N(0, noise_cov)"}
    if kind == "rd":
        dist = reverse_waterfill([budget], model)[0]
        keep = 1.0 - dist / model
        d = model.size
        mech.update(A=np.diag(keep).tolist(), B=np.zeros((d, d)).tolist(),
                    noise_cov=np.diag(dist * keep).tolist(), allocation=dist.tolist(),
                    distortion=float(dist.sum()))
    elif kind in ("prop1", "prop3"):
        m = scalar_mechanism(model, budget, observation)  # type: ignore[arg-type]
        mech.update(A=[[m["a"]]], B=[[m["b"]]], noise_cov=[[m["noise_var"]]],
                    distortion=m["distortion"])
    else:
        mech.update(vector_mechanism(model[0], model[1], budget))
    return Optimum(value=value, method=METHODS[kind], bound_kind="exact", mechanism=mech)
