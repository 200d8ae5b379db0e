"""f-divergence privacy -> (eps, delta)-IP -> weak DP (Wang & Tay), against exact numbers.

Every bound is checked on many random finite joints against the exact smallest
delta; closed forms are worked out by hand for symmetric channels; tightness
is checked on two-valued-disparity constructions where the appendices'
inequalities hold with equality; and the OCR typos of the paper are shown to
give false bounds when read literally.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.stats import entropy, norm

from privbench.datasets.errors import InputError
from privbench.theory import measures
from privbench.theory.guarantees import (
    chi2_information,
    dp_delta,
    dp_from_strong_ip,
    guarantees,
    ip_delta,
    ip_delta_bound,
    ip_tail_bounds,
    ip_tails,
    kl_information,
    strong_divergences,
    strong_ip_delta,
    strong_ip_delta_bound,
    tv_information,
)

DIVS = ("tv", "kl", "chi2")
EPS = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
LEVEL = {"tv": tv_information, "kl": kl_information, "chi2": chi2_information}


def random_joint(rng: np.random.Generator) -> np.ndarray:
    """Dense, sparse and near-independent joints of random shape (n_s, n_z)."""
    n_s, n_z = int(rng.integers(2, 6)), int(rng.integers(2, 8))
    kind = rng.integers(3)
    p = rng.dirichlet(np.full(n_s * n_z, rng.choice([0.3, 1.0, 5.0]))).reshape(n_s, n_z)
    if kind == 1:  # sparse: drop cells, keep every row alive
        p = p * (rng.random(p.shape) > 0.35)
        p[np.arange(n_s), rng.integers(n_z, size=n_s)] += 0.05
    elif kind == 2:  # near independent: the regime where bounds are < 1
        prod = np.outer(rng.dirichlet(np.ones(n_s)), rng.dirichlet(np.ones(n_z)))
        p = (1 - (lam := np.exp(rng.uniform(np.log(1e-3), np.log(0.2))))) * prod + lam * p
    return p / p.sum()


def symmetric(n: int, c: float) -> np.ndarray:
    """Uniform S through the n-ary symmetric channel P(z=s|s) = c: shape (n, n)."""
    return np.where(np.eye(n, dtype=bool), c, (1 - c) / (n - 1)) / n


JOINTS = [random_joint(np.random.default_rng(seed)) for seed in range(400)]


# ------------------------------------------------------------ exact quantities
@pytest.mark.parametrize("c", [0.05, 0.3, 0.45, 0.5, 0.8])
def test_binary_symmetric_closed_forms(c: float) -> None:
    p = symmetric(2, c)  # d = 2c on the diagonal, 2(1-c) off it
    assert tv_information(p) == pytest.approx(abs(1 - 2 * c), abs=1e-12)
    assert kl_information(p) == pytest.approx(np.log(2) + c * np.log(c) + (1 - c) * np.log(1 - c))
    assert chi2_information(p) == pytest.approx((1 - 2 * c) ** 2, abs=1e-12)
    assert strong_divergences(p, "tv") == pytest.approx(abs(1 - 2 * c), abs=1e-12)
    assert strong_divergences(p, "kl") == pytest.approx(-np.log(2) - 0.5 * np.log(c * (1 - c)))
    assert strong_divergences(p, "chi2") == pytest.approx((1 - 2 * c) ** 2 / (4 * c * (1 - c)))
    for eps in EPS:
        hi, lo = max(2 * c, 2 * (1 - c)), min(2 * c, 2 * (1 - c))
        right = hi / 2 * (hi > np.exp(eps))
        left = lo / 2 * (lo < np.exp(-eps))
        assert ip_tails(p, eps) == pytest.approx((left, right), abs=1e-12)
        assert ip_delta(p, eps) == pytest.approx(left + right, abs=1e-12)
        bad = (hi > np.exp(eps)) or (lo < np.exp(-eps))
        assert strong_ip_delta(p, eps) == pytest.approx(float(bad), abs=1e-12)
        want = max(0.0, c - np.exp(eps) * (1 - c)) + max(0.0, (1 - c) - np.exp(eps) * c)
        assert dp_delta(p, eps) == pytest.approx(want, abs=1e-12)


def test_exact_measures_cross_checked() -> None:
    for p in JOINTS[:100]:
        p_s, p_z = p.sum(1), p.sum(0)
        mi = entropy(p_s) + entropy(p_z) - entropy(p.ravel())
        assert kl_information(p) == pytest.approx(mi, abs=1e-10)
        assert kl_information(p) == pytest.approx(measures.mutual_information(p), abs=1e-12)
        chi2 = sum(p[s, z] ** 2 / (p_s[s] * p_z[z]) for s in range(p.shape[0])
                   for z in range(p.shape[1]) if p_z[z] > 0) - 1
        assert chi2_information(p) == pytest.approx(chi2, abs=1e-10)
        assert tv_information(p) == pytest.approx(np.abs(p - np.outer(p_s, p_z)).sum())
        # Definition 4 (16): D_f(P_SZ || P_S P_Z) = E_S D_f(P_{Z|S} || P_Z)
        cond = p / p_s[:, None]
        assert tv_information(p) == pytest.approx(p_s @ np.abs(cond - p_z).sum(1))
        for eps in EPS:  # strong IP implies IP; both shrink as eps grows
            assert ip_delta(p, eps) <= strong_ip_delta(p, eps) + 1e-12
            assert ip_delta(p, 2 * eps) <= ip_delta(p, eps) + 1e-12
            assert dp_delta(p, 2 * eps) <= dp_delta(p, eps) + 1e-12


def test_strong_chi2_two_point_identity() -> None:
    # Section III-A: chi2(P_Z || P_{Z|s0}) = P(s1)^2 chi2(P_{Z|s1} || P_{Z|s0}) for |S| = 2
    rng = np.random.default_rng(7)
    for _ in range(20):
        prior, cond = rng.dirichlet([1, 1]), rng.dirichlet(np.ones(5), size=2)
        p = prior[:, None] * cond
        pair = [(cond[1 - s] ** 2 / cond[s]).sum() - 1 for s in (0, 1)]
        want = max(prior[1] ** 2 * pair[0], prior[0] ** 2 * pair[1])
        assert strong_divergences(p, "chi2") == pytest.approx(want, rel=1e-10)


# -------------------------------------------------------- bounds hold exactly
def test_theorem1_bounds_hold_on_random_joints() -> None:
    nontrivial = 0
    for p in JOINTS:
        for div in DIVS:
            eta = LEVEL[div](p)
            bounds = ip_delta_bound(eta, EPS, div)
            for eps, bound in zip(EPS, bounds):
                exact_l, exact_r = ip_tails(p, eps)
                tail_l, tail_r = ip_tail_bounds(eta, eps, div)
                assert exact_l <= tail_l + 1e-9 and exact_r <= tail_r + 1e-9
                assert ip_delta(p, eps) <= bound + 1e-9
                nontrivial += bound < 1 and ip_delta(p, eps) > 0
    assert nontrivial > 500  # the check bites: bounds below 1 with positive exact delta


def test_corollary1_and_lemma1_hold_on_random_joints() -> None:
    nontrivial = 0
    for p in JOINTS:
        n_s, alpha = p.shape[0], p.sum(1).min()
        for div in DIVS:
            eta = strong_divergences(p, div)
            bounds = strong_ip_delta_bound(eta, EPS, div, n_s)
            for eps, bound in zip(EPS, bounds):
                strong = strong_ip_delta(p, eps)
                assert strong <= bound + 1e-9
                # Lemma 1 with the exact strong delta, then chained from Corollary 1
                assert dp_delta(p, 2 * eps) <= dp_from_strong_ip(eps, strong, alpha)[1] + 1e-9
                eps2, dp = dp_from_strong_ip(eps, bound, alpha)
                assert eps2 == 2 * eps and dp_delta(p, eps2) <= dp + 1e-9
                nontrivial += (bound < 1 and strong > 0) + (dp < 1 and dp_delta(p, eps2) > 0)
    assert nontrivial > 150


def test_lemma1_needs_the_factor_two() -> None:
    p = symmetric(2, 0.45)  # d in {0.9, 1.1}: strong IP at eps=0.15 holds with delta 0
    assert strong_ip_delta(p, 0.15) == 0.0
    assert dp_delta(p, 0.15) == pytest.approx(0.55 - np.exp(0.15) * 0.45)  # > 0: not eps-DP
    assert dp_delta(p, 0.30) == 0.0  # but 2 eps-DP, as Lemma 1 says


def test_lemma4_tv_from_ip() -> None:
    for p in JOINTS[:200]:
        for eps in EPS:
            assert tv_information(p) <= 2 * (np.expm1(eps) + ip_delta(p, eps)) + 1e-12


# --------------------------------------------------- the paper's typos, tested
def test_theorem1a_ocr_reading_is_false_and_corrected_form_holds() -> None:
    p = symmetric(2, 0.45)  # d in {0.9, 1.1}
    eps = np.log(1.1) - 1e-6  # every cell is in a tail
    eta = tv_information(p)
    assert ip_delta(p, eps) == pytest.approx(1.0)
    assert eta * np.exp(eps) < 0.2  # "eta / (1 e^{-eps})" read as a product
    assert eta / (1 + np.exp(-eps)) < 0.2  # ... or as 1 + e^{-eps}
    assert ip_delta_bound(eta, eps, "tv") == 1.0  # corrected eta / (1 - e^{-eps}) >= 1 here


def test_theorem1a_is_loose_and_refined_tv_bound_is_attained() -> None:
    lam = 0.6  # with prob lam the ternary channel c=2/3 (d in {2, 1/2}), else a pure-noise symbol
    p = np.hstack([lam * symmetric(3, 2 / 3), np.full((3, 1), (1 - lam) / 3)])
    eta, eps = tv_information(p), np.log(2) - 1e-9
    assert eta == pytest.approx(lam * 2 / 3)
    assert ip_delta(p, eps) == pytest.approx(lam)
    refined = sum(ip_tail_bounds(eta, eps, "tv"))
    assert refined == pytest.approx(lam, abs=1e-6)  # attained
    paper = ip_delta_bound(eta, eps, "tv")
    assert paper == pytest.approx(lam * 2 * np.exp(eps) / (1 + np.exp(eps)), abs=1e-6)
    assert paper > ip_delta(p, eps) + 0.15  # slack factor 2e^eps/(1+e^eps) = 4/3


def test_zeta_solves_the_proofs_equation_on_its_domain() -> None:
    def f(q: float, gamma: float) -> float:  # Appendix B, straight from the page
        with np.errstate(divide="ignore"):
            return np.log(gamma) + (1 - q) * np.log((1 - q) / (gamma - q))

    def bisect(eta: float, gamma: float) -> float:  # sup{p < min(1, gamma): f <= eta}
        lo, hi = 0.0, min(1.0, gamma)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if f(mid, gamma) <= eta else (lo, mid)
        return lo

    rng = np.random.default_rng(3)
    for _ in range(200):
        eta, eps = rng.exponential(0.5), rng.exponential(1.0) + 1e-3
        left, right = ip_tail_bounds(eta, eps, "kl")
        assert 0 < left <= np.exp(-eps)  # zeta(-eps) lives on p < gamma = e^{-eps} ...
        assert left == pytest.approx(bisect(eta, np.exp(-eps)), abs=1e-12)
        # ... whereas a sup over all of [0, 1] would reach p = 1 (0 log 0 = 0 <= eta + eps)
        if eta < eps:
            assert 0 < right < 1
            assert right == pytest.approx(bisect(eta, np.exp(eps)), abs=1e-12)
        else:
            assert right == 1.0  # (1 - p) log(...) <= eta - eps holds at p = 1


# ---------------------------------------------------------------- tightness
@pytest.mark.parametrize("div", ["kl", "chi2"])
@pytest.mark.parametrize("n, c", [(10, 0.3), (6, 0.5), (20, 0.1)])
def test_right_tail_bound_is_attained(div: str, n: int, c: float) -> None:
    # d = n c on the diagonal (mass c), d = n(1-c)/(n-1) elsewhere: the data-processing
    # (b) and Cauchy-Schwarz (c) steps are equalities, and the left tail is empty.
    p = symmetric(n, c)
    eps = np.log(n * c) - 1e-9
    assert ip_tails(p, eps) == pytest.approx((0.0, c))
    right = ip_tail_bounds(LEVEL[div](p), eps, div)[1]
    assert right == pytest.approx(c, abs=1e-6)
    # the sum over both tails (Theorem 1) is then not attained: the two worst cases differ
    assert ip_delta_bound(LEVEL[div](p), eps, div) > c + 0.05


# ------------------------------------------------------------ monotonicity
@settings(max_examples=60, deadline=None)
@given(
    level=st.floats(0, 3),
    bump=st.floats(0, 1),
    eps=st.lists(st.floats(0, 8), min_size=2, max_size=8),
)
def test_bounds_monotone_in_eps_and_level(level: float, bump: float, eps: list[float]) -> None:
    eps_arr = np.sort(np.array(eps))
    for div in DIVS:
        b = ip_delta_bound(level, eps_arr, div)
        assert np.all((b >= 0) & (b <= 1))
        assert np.all(np.diff(b) <= 1e-12)
        assert np.all(ip_delta_bound(level + bump, eps_arr, div) >= b - 1e-12)
        assert np.all(strong_ip_delta_bound(level, eps_arr, div, 3) >= b - 1e-12)


def test_uncapped_chi2_right_term_is_not_monotone() -> None:
    eta = 3.0  # increasing until e^eps = sqrt(1 + eta) = 2: the cap at 1 is what hides it
    g = lambda e: np.exp(e) * eta / ((np.exp(e) - 1) ** 2 + eta)  # noqa: E731
    assert g(np.log(2)) > g(0.1) > 1
    assert ip_delta_bound(eta, [0.1, np.log(2)], "chi2").tolist() == [1.0, 1.0]


def test_trivial_cases() -> None:
    for div in DIVS:
        assert ip_delta_bound(0.0, 0.5, div) == 0.0
        assert ip_delta_bound(np.inf, 0.5, div) == 1.0
        assert ip_delta_bound(0.2, 0.0, div) == 1.0
        assert ip_delta_bound(0.2, 800.0, div) <= (0.2 if div == "tv" else 1e-3)
    p = np.outer([0.3, 0.7], [0.2, 0.5, 0.3])
    assert ip_delta(p, 0.0) == 0 and strong_ip_delta(p, 0.0) == 0 and dp_delta(p, 0.0) == 0
    q = np.array([[0.5, 0.0], [0.25, 0.25]])  # P(z=1 | s=0) = 0: strong KL, chi2 infinite
    assert strong_divergences(q, "kl") == np.inf and strong_divergences(q, "chi2") == np.inf
    assert strong_ip_delta(q, 5.0) == strong_ip_delta(q, 1e3) == 0.25  # d(0, 1) = 0 counts (eq 3)
    assert ip_delta(q, 5.0) == 0.0  # ... but is a null event for eq (2)


# --------------------------------------------------- paper remarks (Sec. III)
def test_paper_pinsker_as_printed_fails_with_its_tv() -> None:
    p = symmetric(2, 0.45)  # "TV^2 <= KL" is false with TV = sum|p - q|; TV^2 <= 2 KL holds
    assert tv_information(p) ** 2 > kl_information(p)
    for q in JOINTS[:200]:
        assert tv_information(q) ** 2 <= 2 * kl_information(q) + 1e-12


def test_paper_gaussian_chi2_formula_misses_minus_one() -> None:
    mu0, mu1, sigma = 0.0, 1.0, 1.0
    val = quad(lambda y: norm.pdf(y, mu0, sigma) ** 2 / norm.pdf(y, mu1, sigma), -30, 30)[0] - 1
    assert val == pytest.approx(np.expm1((mu0 - mu1) ** 2 / sigma**2), rel=1e-8)
    assert abs(val - np.exp((mu0 - mu1) ** 2 / sigma**2)) > 0.99  # printed form is off by 1


# ------------------------------------------------------------- convenience
def test_guarantees_dict() -> None:
    out = guarantees(0.05, "chi2", 1.0, n_s=2, min_prior=0.4, strong=True)
    json.dumps(out, allow_nan=False)
    assert out["ip_delta"] == pytest.approx(ip_delta_bound(0.05, 1.0, "chi2"))
    assert out["strong_ip_delta"] == pytest.approx(min(1, 2 * out["ip_delta"]))
    dp = min(1, out["strong_ip_delta"] / 0.4)
    assert (out["dp_eps"], out["dp_delta"]) == pytest.approx((2.0, dp))
    weak = guarantees(0.01, "kl", 0.5)
    assert set(weak) == {"divergence", "level", "eps", "strong", "source", "ip_delta"}
    assert isinstance(weak["ip_delta"], float) and weak["ip_delta"] < 1


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: ip_delta_bound(-0.1, 1.0, "tv"), "level"),
        (lambda: ip_delta_bound(float("nan"), 1.0, "kl"), "level"),
        (lambda: ip_delta_bound(0.1, -1.0, "chi2"), "eps"),
        (lambda: ip_delta_bound(0.1, [0.5, float("nan")], "chi2"), "eps"),
        (lambda: ip_delta_bound(0.1, 1.0, "hellinger"), "divergence"),
        (lambda: dp_from_strong_ip(1.0, 0.1, 0.0), "min_prior"),
        (lambda: dp_from_strong_ip(1.0, 0.1, 1.5), "min_prior"),
        (lambda: guarantees(0.1, "tv", 1.0, n_s=2, min_prior=0.7, strong=True), "min_prior"),
        (lambda: guarantees(0.1, "tv", 1.0, strong=True), "n_s"),
        (lambda: strong_ip_delta_bound(0.1, 1.0, "tv", 0), "n_s"),
        (lambda: ip_delta(np.array([[0.5, 0.6]]), 1.0), "p_sz"),
        (lambda: ip_delta(np.array([[0.0, 0.0], [0.5, 0.5]]), 1.0), "p_sz"),
        (lambda: strong_divergences(np.eye(2) / 2, "renyi"), "divergence"),
    ],
)
def test_bad_input_raises_one_line_input_error(call, word: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert word in str(err.value) and "\n" not in str(err.value)
