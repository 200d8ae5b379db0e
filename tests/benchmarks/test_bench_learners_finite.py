"""Finite learners against theory: PPAN (``ppan``), GAP (``gap``) and the plug-in (``plugin``).

Benchmarks, not tests: targets are measured and printed, never asserted.
Run (about 10-15 minutes on 2 shared CPU cores)::

    python -m pytest -q -p no:cacheprovider tests/benchmarks/test_bench_learners_finite.py \
        --benchmark-enable -s

What runs: PPAN's optimisation gap (default and paper schedules) on symmetric
pair m=10 p=0.4 and binary p=0.5 q=0.25 (n=1000, both observations); the split
of PPAN's total gap at the paper's n=1000 against the plug-in; GAP's MAP gap
(default and paper schedules) on binary p=0.5/0.75 q=0.25 (n=10000, GAP's
size); ablations (constraint forms, initialisation, GAP's paper-schedule parts
and adversaries); 1 vs 2 torch threads; a wall-time summary.

``PRIVBENCH_BENCH_SEEDS`` (default 5) sets the number of seeds.  Seed i draws the
training samples with ``default_rng(i)`` and trains with ``seed=i``.

Definitions (budget b, channel C, true joint J, empirical joint J^ of the
training samples; L_X(C), d_X(C) the exact leakage and distortion of C on X,
OPT_X(b) the optimum of X, all from privbench.theory; the learner's adversary
is never used):

* optimisation gap  = L_J^(C) - OPT_J^(max(d_J^(C), b))     (on the joint it trained on)
* total gap         = L_J(C)  - OPT_J(max(d_J(C), b))        (on the true model)
* finite-sample part = total gap of C^* = the exact optimum of J^ at b (the plug-in's
  mechanism) evaluated on J: what remains with perfect optimisation on these samples
* optimisation part (true joint) = total gap - finite-sample part.

max(d, b) makes every gap strict: under-using the budget is charged (OPT at b),
overshooting it is not rewarded (OPT at d).  Leakage is I(S;Z) in nats for PPAN,
MAP accuracy in percentage points for GAP.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from privbench.bench.plug_in import PlugIn
from privbench.datasets import Binary, SymmetricPair, task_for
from privbench.learners import make_learner
from privbench.theory import curve
from privbench.theory.finite import solve_finite
from privbench.theory.measures import channel_measures

N_SEEDS = int(os.environ.get("PRIVBENCH_BENCH_SEEDS", "5"))
SEEDS = list(range(N_SEEDS))
RESULTS: dict[str, dict] = {}

PPAN_PROBLEMS = {
    "symmetric-pair-m10-p0.4/full": (SymmetricPair(10, 0.4), "full", 1000, np.linspace(0, 0.6, 20)),
    "symmetric-pair-m10-p0.4/useful": (SymmetricPair(10, 0.4), "useful", 1000, np.linspace(0, 0.6, 20)),
    "binary-p0.5-q0.25/full": (Binary(0.5, 0.25), "full", 1000, np.linspace(0, 0.5, 20)),
    "binary-p0.5-q0.25/useful": (Binary(0.5, 0.25), "useful", 1000, np.linspace(0, 0.5, 20)),
}
GAP_PROBLEMS = {
    "binary-p0.5-q0.25/full": (Binary(0.5, 0.25), "full", 10_000, np.linspace(0, 0.5, 20)),
    "binary-p0.5-q0.25/useful": (Binary(0.5, 0.25), "useful", 10_000, np.linspace(0, 0.5, 20)),
    "binary-p0.75-q0.25/full": (Binary(0.75, 0.25), "full", 10_000, np.linspace(0, 0.5, 20)),
    "binary-p0.75-q0.25/useful": (Binary(0.75, 0.25), "useful", 10_000, np.linspace(0, 0.5, 20)),
}


def _emp(samples, shape):
    j = np.zeros(shape)
    np.add.at(j, (samples.s, samples.u), 1.0)
    return j / j.sum()


def strict_gaps(joint, dist, observation, privacy, channels, budgets, opt_at_budget=None):
    """Per budget: leakage - OPT(max(d, b)) on ``joint``; also the distortions."""
    gaps, ds = [], []
    for i, (ch, b) in enumerate(zip(channels, budgets)):
        r = channel_measures(joint, ch, observation, dist)
        d = r["distortion"]
        if d <= b and opt_at_budget is not None:
            opt = opt_at_budget[i]
        else:
            opt = solve_finite(joint, dist, max(d, b), privacy, observation).value
        gaps.append(r[privacy] - opt)
        ds.append(d)
    return np.array(gaps), np.array(ds)


def _train(benchmark, learner, sc, observation, privacy, n, budgets):
    """Fit one curve per seed inside benchmark.pedantic (one round per seed)."""
    fits: list = []
    queue = list(SEEDS)

    def setup():
        seed = queue.pop(0)
        return (seed, sc.sample(n, np.random.default_rng(seed))), {}

    def fit(seed, samples):
        t0 = time.perf_counter()
        mechs = learner.fit(samples, task_for(sc, observation, privacy), list(budgets), seed=seed, device="cpu")
        fits.append((seed, samples, [m.channel() for m in mechs], time.perf_counter() - t0))

    benchmark.pedantic(fit, setup=setup, rounds=len(SEEDS), iterations=1)
    return fits


def _table(title, budgets, rows, fmt="{:8.4f}"):
    print(f"\n{title}")
    print("  budget " + " ".join(f"{k:>12s}" for k in rows))
    for i, b in enumerate(budgets):
        print(f"  {b:6.3f} " + " ".join(f"{fmt.format(v[i]):>12s}" for v in rows.values()))


@pytest.mark.parametrize("schedule", ["default", "paper"])
@pytest.mark.parametrize("problem", list(PPAN_PROBLEMS))
def test_ppan_optimisation_gap(benchmark, problem, schedule):
    sc, obs, n, budgets = PPAN_PROBLEMS[problem]
    fits = _train(benchmark, make_learner("ppan", schedule=schedule), sc, obs, "mi", n, budgets)
    dist = sc.distortion_matrix()
    gaps, overs = [], []
    for seed, samples, channels, _ in fits:
        joint = _emp(samples, sc.joint().shape)
        opt_b = [solve_finite(joint, dist, b, "mi", obs).value for b in budgets]
        g, d = strict_gaps(joint, dist, obs, "mi", channels, budgets, opt_b)
        gaps.append(g)
        overs.append(d - budgets)
    gaps, overs = np.array(gaps), np.array(overs)
    med = np.median(gaps, axis=0)
    secs = [f[3] for f in fits]
    RESULTS[f"ppan/{schedule}/{problem}"] = {"fits": fits, "median_gap": med, "seconds": secs}
    benchmark.extra_info.update({
        "median_gap_per_budget_nats": med.tolist(), "max_median_gap_nats": float(med.max()),
        "max_gap_any_seed_nats": float(gaps.max()), "max_overshoot": float(overs.max()),
        "seconds_per_curve": secs, "budgets": budgets.tolist()})
    _table(f"PPAN {schedule} {problem}: optimisation gap (nats) on the training joint, "
           f"{len(SEEDS)} seeds; {np.mean(secs):.2f} s per 20-budget curve",
           budgets, {"median": med, "max": gaps.max(0), "overshoot": np.median(overs, 0)})
    print(f"  max over budgets of the median gap: {med.max():.5f} nats; worst seed {gaps.max():.5f}")
    assert np.all(np.isfinite(gaps))


@pytest.mark.parametrize("problem", ["symmetric-pair-m10-p0.4/full", "symmetric-pair-m10-p0.4/useful"])
def test_ppan_split_at_the_papers_sample_size(benchmark, problem):
    """Total gap vs the TRUE optimum = optimisation part + finite-sample part (n = 1000)."""
    sc, obs, n, budgets = PPAN_PROBLEMS[problem]
    true_joint, dist = sc.joint(), sc.distortion_matrix()
    opt_true = curve(sc, budgets, "mi", obs)

    def plugin_curves():
        return [(seed, PlugIn().fit(sc.sample(n, np.random.default_rng(seed)), task_for(sc, obs, "mi"),
                                    list(budgets), seed=seed)) for seed in SEEDS]

    plug = benchmark.pedantic(plugin_curves, rounds=1, iterations=1)
    fs = np.array([strict_gaps(true_joint, dist, obs, "mi", [m.channel() for m in ms], budgets, opt_true)[0]
                   for _, ms in plug])
    rows = {"finite-smp": np.median(fs, 0)}
    info = {"finite_sample_part_median": rows["finite-smp"].tolist()}
    for schedule in ("default", "paper"):
        key = f"ppan/{schedule}/{problem}"
        if key not in RESULTS:
            continue
        total = np.array([strict_gaps(true_joint, dist, obs, "mi", ch, budgets, opt_true)[0]
                          for _, _, ch, _ in RESULTS[key]["fits"]])
        rows[f"{schedule}:total"] = np.median(total, 0)
        rows[f"{schedule}:optim"] = np.median(total - fs, 0)
        rows[f"{schedule}:emp"] = RESULTS[key]["median_gap"]
        info[f"{schedule}_total_median"] = rows[f"{schedule}:total"].tolist()
        info[f"{schedule}_optimisation_part_median"] = rows[f"{schedule}:optim"].tolist()
    benchmark.extra_info.update(info)
    _table(f"PPAN split, {problem}, n={n}, median over {len(SEEDS)} seeds (nats): total = optim + finite-smp",
           budgets, rows)
    for k, v in rows.items():
        print(f"  mean over budgets {k:>16s}: {v.mean():.5f}")


@pytest.mark.parametrize("schedule", ["default", "paper"])
@pytest.mark.parametrize("problem", list(GAP_PROBLEMS))
def test_gap_map_gap(benchmark, problem, schedule):
    sc, obs, n, budgets = GAP_PROBLEMS[problem]
    fits = _train(benchmark, make_learner("gap", schedule=schedule), sc, obs, "map", n, budgets)
    dist = sc.distortion_matrix()
    opt_true = curve(sc, budgets, "map", obs)
    emp, total, overs = [], [], []
    for seed, samples, channels, _ in fits:
        joint = _emp(samples, sc.joint().shape)
        opt_b = [solve_finite(joint, dist, b, "map", obs).value for b in budgets]
        g, d = strict_gaps(joint, dist, obs, "map", channels, budgets, opt_b)
        emp.append(100 * g)
        overs.append(d - budgets)
        total.append(100 * strict_gaps(sc.joint(), dist, obs, "map", channels, budgets, opt_true)[0])
    emp, total, overs = np.array(emp), np.array(total), np.array(overs)
    med, med_total = np.median(emp, 0), np.median(total, 0)
    secs = [f[3] for f in fits]
    benchmark.extra_info.update({
        "median_gap_pp_per_budget": med.tolist(), "max_median_gap_pp": float(med.max()),
        "median_total_gap_pp_per_budget": med_total.tolist(), "max_median_total_gap_pp": float(med_total.max()),
        "median_distortion_minus_budget": np.median(overs, 0).tolist(), "seconds_per_curve": secs})
    RESULTS[f"gap/{schedule}/{problem}"] = {"seconds": secs}
    _table(f"GAP {schedule} {problem}: MAP gap (pp), n={n}, {len(SEEDS)} seeds; "
           f"{np.mean(secs):.2f} s per 20-budget curve", budgets,
           {"emp median": med, "emp max": emp.max(0), "true median": med_total,
            "d-b median": np.median(overs, 0)})
    print(f"  max over budgets of the median gap: {med.max():.3f} pp on the training joint, "
          f"{med_total.max():.3f} pp on the true joint")
    assert np.all(np.isfinite(emp))


def _variant_summary(name, params, problems, privacy, scale):
    """Max over budgets of the median (over seeds) optimisation gap, and the median under-use."""
    rows = {}
    for problem, (sc, obs, n, budgets) in problems.items():
        gaps, used = [], []
        for seed in SEEDS:
            samples = sc.sample(n, np.random.default_rng(seed))
            mechs = make_learner(name, **params).fit(samples, task_for(sc, obs, privacy), list(budgets), seed=seed,
                                                     device="cpu")
            joint = _emp(samples, sc.joint().shape)
            g, d = strict_gaps(joint, sc.distortion_matrix(), obs, privacy, [m.channel() for m in mechs], budgets)
            gaps.append(scale * g)
            used.append(d - budgets)
        rows[problem] = (float(np.median(gaps, 0).max()), float(np.max(gaps)), float(np.median(used, 0).max()),
                         float(np.median(used, 0).min()))
    return rows


PPAN_VARIANTS = {"augmented (default)": {}, "lagrangian dual_lr=1": {"constraint": "lagrangian"},
                 "lagrangian dual_lr=0.1": {"constraint": "lagrangian", "dual_lr": 0.1},
                 "penalty lambda=500": {"constraint": "penalty", "penalty": 500.0},
                 "random init": {"init": "random"}}
GAP_VARIANTS = {"paper": {"schedule": "paper"},
                "paper, belief=expected": {"schedule": "paper", "belief": "expected"},
                "paper, augmented": {"schedule": "paper", "constraint": "augmented", "penalty": 20.0},
                "paper, softmax + least-distortion init": {"schedule": "paper", "parametrization": "softmax",
                                                           "init": "least-distortion"},
                "default, adversary=xent": {"adversary": "xent"},
                "default, adversary=alpha (eq 7), alpha=100": {"adversary": "alpha"},
                "default": {}}


@pytest.mark.parametrize("learner", ["ppan", "gap"])
def test_ablations(benchmark, learner):
    """Constraint forms and initialisation (PPAN, symmetric pair m=10 n=1000), and the parts of
    GAP's paper schedule and of its adversary (binary models, n=10000)."""
    if learner == "ppan":
        problems = {k: v for k, v in PPAN_PROBLEMS.items() if k.startswith("symmetric")}
        variants, privacy, scale, unit = PPAN_VARIANTS, "mi", 1.0, "nats"
    else:
        problems, variants, privacy, scale, unit = GAP_PROBLEMS, GAP_VARIANTS, "map", 100.0, "pp"
    out = benchmark.pedantic(lambda: {v: _variant_summary(learner, p, problems, privacy, scale)
                                      for v, p in variants.items()}, rounds=1, iterations=1)
    print(f"\n{learner} variants: max_b median gap ({unit}) | worst seed | max_b median d-b | min_b median d-b")
    for v, rows in out.items():
        for problem, (med, worst, over, under) in rows.items():
            print(f"  {v:44s} {problem:32s} {med:8.4f} {worst:8.4f} {over:8.4f} {under:8.4f}")
    benchmark.extra_info.update({v: rows for v, rows in out.items()})


@pytest.mark.parametrize("threads", [1, 2])
def test_ppan_threads(benchmark, threads):
    """One default 20-budget curve (symmetric pair m=10, full) with 1 or 2 torch threads."""
    sc, obs, n, budgets = PPAN_PROBLEMS["symmetric-pair-m10-p0.4/full"]
    samples = sc.sample(n, np.random.default_rng(0))
    learner = make_learner("ppan", threads=threads)
    benchmark.pedantic(learner.fit, args=(samples, task_for(sc, obs, "mi"), list(budgets)),
                       kwargs={"seed": 0, "device": "cpu"}, rounds=3, iterations=1)
    RESULTS[f"threads/{threads}"] = {"seconds": [benchmark.stats.stats.median]}


def test_summary_wall_time_ratio(benchmark):
    """Seconds per 20-budget curve, default vs paper schedule (from the runs above)."""
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    print("\nwall time per 20-budget curve (median over seeds): default vs paper schedule")
    for learner, problems in (("ppan", PPAN_PROBLEMS), ("gap", GAP_PROBLEMS)):
        for problem in problems:
            d, p = RESULTS.get(f"{learner}/default/{problem}"), RESULTS.get(f"{learner}/paper/{problem}")
            if d and p:
                sd, sp = np.median(d["seconds"]), np.median(p["seconds"])
                print(f"  {learner:5s} {problem:34s} default {sd:6.2f} s  paper {sp:6.2f} s  ratio {sp / sd:5.1f}x")
                benchmark.extra_info[f"{learner}/{problem}"] = {"default_s": sd, "paper_s": sp}
    for t in (1, 2):
        if f"threads/{t}" in RESULTS:
            print(f"  ppan default, m=10 full, threads={t}: {RESULTS[f'threads/{t}']['seconds'][0]:.2f} s")
