"""The finite programs, fast and certified: the provider of kind ``finite``.

:func:`solve_finite` (one budget) and :func:`finite_curve` (many, reusing work)
solve

    minimise_{P(Z|W)}  L(P_SZ)   subject to   E d(U, Z) <= budget

for ``mi`` and ``chi2`` with one interior-point solve on every entry up to WHOLE_MAX
entries (certified by its duals), else with the interior point on a guessed support of
``active_set.py`` (the support from 30 steps of ``mirror.py``, whose own answer
is taken where it certifies already), polished by ``mirror.py`` where it falls
short, and ``mirror.py`` alone after that (and alone above ACTIVE_MAX[privacy] entries,
where the interior point's restricted program grows too large); for ``map`` with the HiGHS linear
program of ``highs_cg.py`` (``highs_lp.py`` if that fails; for the full observation under Hamming
distortion the program reduced to P(S, Z) of ``hamming_map.py``, under a distortion on a line its flow form of
``line_map.py``, ``map_solve.py``). Every answer is the
leakage of a feasible channel together with a proven lower bound on the
optimum; it counts as certified when

    value - bound <= GAP_TOL * max(1, |value|)        (GAP_TOL = 1e-7),

and otherwise the cvxpy program of ``program.py`` is solved instead and the
certificate says so (``fallback``). ``solver="cvxpy"`` asks for the cvxpy
program directly (the reference the tests compare against).

Before anything of the program's size is allocated, its memory is estimated
from the alphabet sizes (``size.py``); an oversize program is refused with an
InputError naming the size and the limit.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import check_observation

from ..base import PRIVACIES, Optimum, check_budget, check_budgets
from ..measures import PRIVACY_MEASURES, observation_kernel
from ..registry import Provider, register
from .data import FiniteData, finite_data
from .active_set import ActiveSetSolver, meet_budget
from .hamming_map import HammingFullMap, hamming_scale
from .line_map import LineFullMap, line_positions
from .reduced_map import ReducedFullMap
from .highs_cg import MapColumnGeneration
from .map_solve import solve_map
from .interior_certified import solve_interior_certified
from .interior_full import one_s_per_w
from .mirror import SmoothResult, solve_smooth, support_mask
from .program import solve_conic
from .size import check_program_size, estimate_bytes, memory_limit

__all__ = ["GAP_TOL", "SOLVERS", "FiniteProgram", "finite_curve", "solve_finite"]

GAP_TOL = 1e-7
MAX_ITER = 20_000  # first-order steps before the solver gives up certifying (then cvxpy) ...
MAX_WORK = 4e8  # ... and at most this many channel-entry updates (n_w n_z per step), at least 200 steps
ACTIVE_MAX = {"mi": 200_000, "chi2": 1_100_000}  # programs with more entries: mirror descent only
# (random joint, full observation, m = 100, 1e6 entries: chi2's interior point on a support certifies
# in 23 CPU s, where mirror descent did not in 119 s; mi's stops with "InsufficientProgress")
WHOLE_MAX = 400  # programs with at most this many entries: one interior-point solve on all of them ...
WHOLE_FALLBACK_MAX = 5_000  # ... and up to this many, the same where the guessed support does not certify
DENSE_PER_W = 2.0  # mi, chi2 with more than this many s per observation w (the useful observation: all n_s) try
# the primal-dual interior point of ``interior_certified.py``: first where the program has at most WHOLE_MAX
# entries, else after the mirror-descent warm-up (which certifies the symmetric pair)
INTERIOR_FIRST_N = 128  # ... and where each w has exactly one s (the full observation), first where n_s n_z is at
# most this (random joint, full, m = 10: 7 ms, where the warm-up that does not certify cost another 7), after
# the warm-up above it (with the low-rank solve of ``interior_lowrank.py``), also where the program is over
# ACTIVE_MAX
WARMUP = 30  # mirror-descent steps that guess the support of larger ones ...
SEED_TOL = 1e-3  # ... the entries above this / n_z
POLISH = 200  # mirror-descent steps from the interior point's solution ...
POLISH_GAP = {"mi": 1e-5, "chi2": 0.0}  # ... once its relative gap is below this (the rest is the interior
# point's accuracy); chi2: never (random joint, useful m = 50: the polish fails at gap 6e-7 and the whole
# program follows, 0.61 CPU s; one more round on the support certifies, 0.34 s)
SOLVERS = ("auto", "cvxpy")
_KIND = {"mi": "exponential cone", "chi2": "second-order cone", "map": "linear program"}


class _Model:
    """One (joint, distortion, observation): its sparse data and, for map, its assembled LP (and, for the
    full observation under Hamming distortion or a distortion on a line, the LP on P(S, Z) of
    ``hamming_map.py`` / ``line_map.py``, built by ``reduce``)."""

    def __init__(self, data: FiniteData, reduce: Callable[[], ReducedFullMap] | None = None) -> None:
        self.data = data
        self.lp: MapColumnGeneration | None = None
        self.active: dict[str, ActiveSetSolver] = {}
        self.reduce = reduce
        self.reduced: ReducedFullMap | None = None

    def map_lp(self) -> MapColumnGeneration:
        if self.lp is None:
            self.lp = MapColumnGeneration(self.data)
        return self.lp

    def reduced_lp(self) -> ReducedFullMap | None:
        """The LP on P(S, Z) where it applies (full observation; Hamming or a line), else None."""
        if self.reduce is None:
            return None
        if self.reduced is None:
            self.reduced = self.reduce()
        return self.reduced

    def active_set(self, privacy: str) -> ActiveSetSolver:
        if privacy not in self.active:
            self.active[privacy] = ActiveSetSolver(self.data, privacy)
        return self.active[privacy]


def _reducer(joint: np.ndarray, distortion: np.ndarray, data: FiniteData) -> Callable[[], ReducedFullMap] | None:
    """What builds the full observation's map LP on P(S, Z): Hamming distortion, a distortion on a line."""
    scale = hamming_scale(distortion)
    if scale is not None:
        return lambda: HammingFullMap(joint, scale, data)
    positions = line_positions(distortion)
    if positions is not None:
        return lambda: LineFullMap(joint, positions, data)
    return None


@lru_cache(maxsize=16)
def _cached_model(key: bytes, shapes: tuple, observation: str | None) -> _Model:
    (js, ds, ks) = shapes
    buf = np.frombuffer(key, dtype=float)
    a, b = int(np.prod(js)), int(np.prod(ds))
    obs: Any = observation if observation is not None else buf[a + b :].reshape(ks)
    joint, distortion = buf[:a].reshape(js), buf[a : a + b].reshape(ds)
    data = finite_data(joint, distortion, obs)
    return _Model(data, _reducer(joint, distortion, data) if observation == "full" else None)


def _model(joint: np.ndarray, distortion: np.ndarray, observation: str | np.ndarray) -> _Model:
    parts = [joint.ravel(), distortion.ravel()]
    kshape: tuple = ()
    if not isinstance(observation, str):
        parts.append(observation.ravel())
        kshape = observation.shape
    key = np.concatenate(parts).astype(float).tobytes()
    name = observation if isinstance(observation, str) else None
    return _cached_model(key, (joint.shape, distortion.shape, kshape), name)


def _validate(joint: Any, distortion: Any, privacy: str, observation: Any, solver: str
              ) -> tuple[np.ndarray, np.ndarray, str | np.ndarray]:
    """Check the request and its size (before anything of the program's size exists)."""
    if privacy not in PRIVACY_MEASURES:
        raise InputError(f"privacy={privacy!r} is unknown (allowed: {', '.join(PRIVACY_MEASURES)})")
    if solver not in SOLVERS:
        raise InputError(f"solver={solver!r} is unknown (allowed: {', '.join(SOLVERS)})")
    joint = np.asarray(joint, dtype=float)
    distortion = np.asarray(distortion, dtype=float)
    if joint.ndim != 2:
        raise InputError(f"joint has shape {joint.shape}, expected (n_s, n_u)")
    n_s, n_u = joint.shape
    if distortion.ndim != 2 or distortion.shape[0] != n_u:
        raise InputError(f"distortion has shape {distortion.shape}, expected ({n_u}, n_z)")
    if isinstance(observation, str):
        check_observation(observation)
        n_w = n_u if observation == "useful" else n_s * n_u
    else:
        observation = observation_kernel(n_s, n_u, observation)
        n_w = observation.shape[1]
    kind = "cvxpy" if solver == "cvxpy" else ("highs" if privacy == "map" else "first-order")
    check_program_size(n_s, n_u, n_w, distortion.shape[1], kind, f"{privacy} program")
    return joint, distortion, observation


def _check_reachable(data: FiniteData, budget: float) -> None:
    if budget < data.min_distortion - 1e-12:
        raise InputError(
            f"budget={budget!r} is below the smallest achievable distortion {data.min_distortion:.6g} "
            "(no mechanism meets it)"
        )


def _solve_fast(model: _Model, budget: float, privacy: str, warm: np.ndarray | None
                ) -> tuple[np.ndarray, dict[str, Any]]:
    """(channel on the live rows, certificate) from the fast solver of ``privacy``."""
    if privacy == "map":
        return solve_map(model, budget, GAP_TOL)
    return _solve_smooth_program(model, budget, privacy, warm)


def _certified(s: SmoothResult) -> bool:
    return s.value - s.bound <= GAP_TOL * max(1.0, abs(s.value))


def _interior_cert(s: SmoothResult) -> dict[str, Any]:
    return {"solver": "primal-dual interior point", "iterations": s.iterations, "multiplier": s.multiplier,
            "dual": s.bound}


def _mirror(data: FiniteData, budget: float, privacy: str, warm: np.ndarray | None, steps: int
            ) -> tuple[np.ndarray, dict[str, Any]]:
    s = solve_smooth(data, budget, privacy, warm, tol=GAP_TOL, max_iter=steps)
    return s.channel, {"solver": "mirror descent", "iterations": s.iterations, "multiplier": s.multiplier,
                       "dual": s.bound}


def _solve_smooth_program(model: _Model, budget: float, privacy: str, warm: np.ndarray | None
                          ) -> tuple[np.ndarray, dict[str, Any]]:
    """mi, chi2: the primal-dual interior point first on small programs (module constants); else a short
    mirror descent (its answer, where it certifies already), then the primal-dual interior point where
    P(S, W) is dense or has one s per w, then the restricted interior-point program on the support the
    mirror descent suggests, polished by mirror descent from its solution, then mirror descent alone
    where that does not certify."""
    data = model.data
    steps = int(min(MAX_ITER, max(200, MAX_WORK / data.cost.size)))
    support = support_mask(data, budget)
    one_s_all = support is None and one_s_per_w(data.g_s)
    big = data.cost.size > ACTIVE_MAX[privacy]  # the support's program would be too large: mirror descent,
    if big and not one_s_all:  # after the low-rank interior point where each w has one s
        return _mirror(data, budget, privacy, warm, steps)
    dense = support is None and data.g_s.nnz > DENSE_PER_W * data.shape[0]
    one_s = one_s_all and data.p_s.size * data.shape[1] <= INTERIOR_FIRST_N
    first_ipm = (dense and data.cost.size <= WHOLE_MAX) or one_s
    if first_ipm:  # small: the primal-dual interior point first
        s = solve_interior_certified(data, budget, privacy, GAP_TOL)
        if s is not None and _certified(s):
            return s.channel, _interior_cert(s)
    if data.cost.size <= WHOLE_MAX:  # small: the whole program at once, certified by its duals
        s = model.active_set(privacy).solve_whole(budget, GAP_TOL, support)
        if s.channel.size and _certified(s):
            return s.channel, {"solver": "interior point", "multiplier": s.multiplier, "dual": s.bound}
    # a short mirror descent from the neighbouring budget's channel (or uniform) guesses the support
    # (a third of it where the interior point follows: the symmetric pair certifies at the first check, and the
    # random joint paid for the rest: 1.5 of 2.2 s at full, m = 100; useful chi2 m = 30 7.7 -> 3.0 ms)
    ipm_next = (dense or one_s_all) and not first_ipm
    first = solve_smooth(data, budget, privacy, warm, tol=GAP_TOL, max_iter=WARMUP // 3 if ipm_next else WARMUP,
                         check_every=WARMUP // 3)
    if first.value <= GAP_TOL or _certified(first):  # done (at perfect privacy: both leakages are >= 0)
        return first.channel, {"solver": "mirror descent", "iterations": first.iterations,
                               "multiplier": first.multiplier, "dual": max(first.bound, 0.0)}
    if ipm_next:  # from the warm-up's multiplier
        s = solve_interior_certified(data, budget, privacy, GAP_TOL, first.multiplier)
        if s is not None and _certified(s):
            return s.channel, _interior_cert(s)
        if dense:  # the rest of the warm-up, for the support below
            first = solve_smooth(data, budget, privacy, first.channel, tol=GAP_TOL, max_iter=WARMUP - WARMUP // 3,
                                 check_every=WARMUP // 3)
    if big:
        return _mirror(data, budget, privacy, warm, steps)
    seed = first.channel > SEED_TOL / data.shape[1]
    if warm is not None:
        seed |= warm > SEED_TOL / data.shape[1]
    s = model.active_set(privacy).solve(budget, GAP_TOL, support, seed, POLISH_GAP[privacy])
    solver, it = "interior point on a support", {"rounds": s.iterations}
    if s.channel.size and not _certified(s):
        polish = solve_smooth(data, budget, privacy, s.channel, tol=GAP_TOL, max_iter=POLISH, mix=1e-12)
        s = polish if polish.value - polish.bound < s.value - s.bound else s
        solver, it = solver + ", mirror descent polish", {**it, "iterations": polish.iterations}
    if (not s.channel.size or not _certified(s)) and WHOLE_MAX < data.cost.size <= WHOLE_FALLBACK_MAX:
        whole = model.active_set(privacy).solve_whole(budget, GAP_TOL, support)
        s, solver, it = (whole, "interior point", {}) if whole.channel.size and _certified(whole) else (s, solver, it)
    if not s.channel.size or not _certified(s):
        return _mirror(data, budget, privacy, warm, steps)
    return s.channel, {"solver": solver, **it, "multiplier": s.multiplier, "dual": s.bound}


def _finish(model: _Model, live_channel: np.ndarray, cert: dict[str, Any], budget: float, privacy: str,
            observation: str | np.ndarray) -> Optimum:
    """The Optimum of a fast solve: exact value and distortion of the channel, gap to the bound."""
    data = model.data
    n_z = data.shape[1]
    channel = np.full((data.live.size, n_z), 1.0 / n_z)
    channel[data.live] = live_channel
    value = PRIVACY_MEASURES[privacy](np.asarray(data.g_s @ live_channel))
    dist = float((data.cost * live_channel).sum())
    gap = value - cert["dual"]
    cert.update(primal=value, exact_value=value, duality_gap=gap, relative_gap=gap / max(1.0, abs(value)),
                certified=bool(gap <= GAP_TOL * max(1.0, abs(value))), distortion=dist,
                budget_violation=max(0.0, dist - budget))
    obs_name = observation if isinstance(observation, str) else "kernel"
    mech = {"type": "finite-channel", "observation": obs_name, "channel": channel.tolist()}
    method = f"convex program ({_KIND[privacy]}, {cert['solver']}, certified gap {gap:.1e})"
    return Optimum(value=value, method=method, bound_kind="exact", mechanism=mech, certificate=cert)


def _one(model: _Model, joint: np.ndarray, distortion: np.ndarray, budget: float, privacy: str,
         observation: str | np.ndarray, warm: np.ndarray | None) -> tuple[Optimum, np.ndarray | None]:
    """Fast solve, cvxpy where it does not certify (if that fits in memory): (optimum, live channel)."""
    n_live, n_z = int(model.data.live.sum()), distortion.shape[1]
    try:
        with np.errstate(all="ignore"):  # a degenerate iterate (NaN) is simply not certified: cvxpy below
            channel, cert = _solve_fast(model, budget, privacy, warm)
    except FloatingPointError as exc:
        channel, cert = np.full((n_live, n_z), np.nan), {"solver": f"mirror descent ({exc})"}
    if not np.all(np.isfinite(channel)):
        channel, cert = np.full((n_live, n_z), 1.0 / n_z), {**cert, "dual": -np.inf}
    # a solver's tolerance may leave E d a hair over the budget (HiGHS: 5e-11 to 1e-9 on random joints under
    # |u - z| distortion, and the value below the proven bound by as much): the value must be a feasible channel's
    channel = meet_budget(channel, model.data, budget)
    opt = _finish(model, channel, cert, budget, privacy, observation)
    if opt.certificate["certified"]:  # type: ignore[index]
        return opt, channel
    n_s, n_u = joint.shape
    n_w, n_z = model.data.live.size, distortion.shape[1]
    if estimate_bytes(n_s, n_u, n_w, n_z, "cvxpy") > memory_limit():
        opt.certificate["fallback"] = "none: the cvxpy program is over the memory limit"  # type: ignore[index]
        # never exact without a certificate: the sandwich [proven bound, achieved value]
        lower = max(float(opt.certificate["dual"]), 0.0)  # type: ignore[index]  # every leakage is >= 0
        return Optimum(opt.value, opt.method.replace("certified gap", "uncertified, gap"), "certified",
                       opt.mechanism, certificate=opt.certificate, lower=lower), channel
    ref = solve_conic(joint, distortion, budget, privacy, observation)
    why = f"{cert['solver']} gap {opt.certificate['duality_gap']:.2e} not certified; cvxpy used"  # type: ignore[index]
    return Optimum(ref.value, ref.method, ref.bound_kind, ref.mechanism,
                   certificate={**(ref.certificate or {}), "fallback": why}), None


def solve_finite(joint: Any, distortion: Any, budget: float, privacy: str = "mi",
                 observation: str | np.ndarray = "useful", solver: str = "auto") -> Optimum:
    """Optimal leakage of a finite model at one distortion budget, certified.

    Parameters
    ----------
    joint : ndarray, shape (n_s, n_u)
        P(S=s, U=u).
    distortion : ndarray, shape (n_u, n_z)
        d(u, z) >= 0.
    budget : float
        Bound on E d(U, Z), >= the smallest achievable distortion.
    privacy : {"mi", "map", "chi2"}
    observation : {"useful", "full"} or ndarray, shape (n_s * n_u, n_w)
    solver : {"auto", "cvxpy"}
        ``auto``: the fast certified solver, cvxpy where it does not certify.

    Returns
    -------
    Optimum
        ``value`` is the exact leakage of the returned feasible channel
        (``mechanism["channel"]``, shape (n_w, n_z)); ``certificate`` holds the
        solver, ``primal`` (= value), ``dual`` (a proven lower bound on the
        optimum), ``duality_gap``, ``certified``, the channel's distortion and
        ``budget_violation``, and ``fallback`` where cvxpy was used instead.
    """
    budget = check_budget(budget)
    joint, distortion, observation = _validate(joint, distortion, privacy, observation, solver)
    if solver == "cvxpy":
        return solve_conic(joint, distortion, budget, privacy, observation)
    model = _model(joint, distortion, observation)
    _check_reachable(model.data, budget)
    return _one(model, joint, distortion, budget, privacy, observation, None)[0]


def finite_curve(joint: Any, distortion: Any, budgets: Any, privacy: str = "mi",
                 observation: str | np.ndarray = "useful", solver: str = "auto") -> list[Optimum]:
    """:func:`solve_finite` at each budget (shape (k,)), reusing work between budgets.

    The program's data (and the LP's HiGHS instance) are built once; budgets
    are solved in increasing order, each first-order solve warm-started from
    the channel of the budget before it, each LP from the basis and columns of
    the one before. Returns the optima in the order given.
    """
    b = check_budgets(budgets)
    joint, distortion, observation = _validate(joint, distortion, privacy, observation, solver)
    if solver == "cvxpy":
        return [solve_conic(joint, distortion, x, privacy, observation) for x in b]
    model = _model(joint, distortion, observation)
    out: list[Optimum | None] = [None] * b.size
    warm = None
    for i in np.argsort(b, kind="stable"):
        _check_reachable(model.data, float(b[i]))
        out[i], warm = _one(model, joint, distortion, float(b[i]), privacy, observation, warm)
    return out  # type: ignore[return-value]


@register(kind="finite")
class FiniteProgram(Provider):
    """Any finite scenario (``joint()``, ``distortion_matrix()``): the certified programs."""

    pairs = tuple((p, o) for p in PRIVACIES for o in ("useful", "full"))

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        _check_scenario_size(scenario, privacy, observation)
        opts = finite_curve(scenario.joint(), scenario.distortion_matrix(), budgets, privacy, observation)  # type: ignore[arg-type]
        return np.array([o.value for o in opts])

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        _check_scenario_size(scenario, privacy, observation)
        return solve_finite(scenario.joint(), scenario.distortion_matrix(), budget, privacy, observation)  # type: ignore[arg-type]


def _check_scenario_size(scenario: Any, privacy: str, observation: str | None) -> None:
    """Refuse an oversize program from the scenario's alphabet sizes, before ``joint()`` is built."""
    n_s, n_u, n_z = scenario.alphabet_sizes()
    n_w = n_u if observation == "useful" else n_s * n_u
    check_program_size(n_s, n_u, n_w, n_z, "highs" if privacy == "map" else "first-order",
                       f"{scenario.id} {privacy}/{observation}")
