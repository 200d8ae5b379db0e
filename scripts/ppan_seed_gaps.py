"""ppan-seed (or another learner) on the paper suite's experiments, scored by the bench's evaluators.

    python scripts/ppan_seed_gaps.py [--only ppan-fig4] [--learner ppan-seed] [--reps 5]
        [--budget 2.5 ...] [--n-eval 20000] [--learner-param steps=3000 ...] [--show-evaluators] [--oracle | --inspect]

Loads the shipped ``paper`` suite, keeps the cases of ``--learner`` in the ``--only`` experiments
(default ppan-fig4) and runs each exactly as ``privbench run`` does (:func:`execute_case`: fit on the
suite's n_train samples, mechanisms saved and scored from their files in the evaluator process by
the bench's independent evaluators and headline).  ``--learner-param`` overrides hyper-parameters
(the case's seed changes with them, as in ``privbench run``).  Prints per budget and repetition the
headline leakage (with its evaluator), distortion, optimum at that distortion, gap and training time
per budget, then per experiment the median and worst gap (over every point) and, per budget, the
mean gap over repetitions.

``--inspect`` (ppan-seed on ppan-fig4): fit each case in this process (same samples and seed as
``privbench run``) and print, per budget, what the release Z = W M + c + eps L + f(W, eps) is made
of instead of scoring it: the affine gain (singular values of Sigma^{1/2} M), the exact I(U; Z) of
the affine part alone (Gaussian formula, f left out), the MLP output's variance and the variance of
its conditional mean E[f | W] (the part of f that carries W), the Gaussian I(U; Z) of the whole
release from 400,000 samples (its bias about 25 / (2 n) = 3e-5 nats) and KSG on 80,000 samples
(4x the suite's n_eval; stderr as the bench's).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from privbench.bench.execute import execute_case
from privbench.bench.suites import load_suite
from privbench.bench.suites.case import normalize_value
from privbench.bench.suites.smoke import select_experiments


def parse_value(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def water_filling_release(task: object, variances: np.ndarray, budget: float) -> object:
    """The optimal release of the Gaussian source N(0, diag(variances)) at ``budget`` as a PPANNet
    (family seed, affine, Gaussian seed noise, MLP output zero): Z_i = a_i U_i + sqrt(a_i D_i) N_i,
    a_i = 1 - D_i / var_i, D_i = min(theta, var_i) (reverse water-filling); a budget above the
    total variance is spent as independent noise (leakage 0, distortion the budget)."""
    import torch
    from scipy.optimize import brentq

    from privbench.learners.nn.release import build_release
    from privbench.learners.ppan_net import PPANNet

    var = np.asarray(variances, float)
    if budget >= var.sum():
        d_i = var.copy()
    else:
        theta = brentq(lambda t: np.minimum(t, var).sum() - budget, 0.0, var.max())
        d_i = np.minimum(theta, var)
    a = 1.0 - d_i / var
    d = len(var)
    extra = max(budget - var.sum(), 0.0) / d  # beyond the total variance: independent noise spends the rest
    cfg = {"family": "seed", "d_w": d, "d_u": d, "hidden": [8], "activation": "relu", "n_noise": 8,
           "residual": True, "affine": True, "seed_noise": "gaussian"}
    module = build_release(1, cfg)
    with torch.no_grad():
        for p in module.parameters():
            p.zero_()
        module.M[0] = torch.as_tensor(np.diag(a), dtype=torch.float32)
        module.L[0, :d] = torch.as_tensor(np.diag(np.sqrt(a * d_i + extra)), dtype=torch.float32)
    return PPANNet(task, budget, cfg, module.state_dict(), {"oracle": True})


def oracle_rows(case: object) -> list[dict]:
    """Score the water-filling releases of ``case``'s budgets like execute_case does (no training)."""
    from privbench.bench.evaluators import evaluate, headline
    from privbench.bench.execute import score_budget
    from privbench.bench.scores import score
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for

    sc = make_scenario(case.scenario, case.params)
    task = task_for(sc, case.observation, case.training_privacy, case.distortion)
    rows = []
    for b in case.budgets:
        mech = water_filling_release(task, np.asarray(case.params["variances"], float), b)
        rows.append({"budget": b, "train_time_s": 0.0, **score_budget(case, sc, mech, b, evaluate, headline, score)})
    return rows


def inspect_rows(case: object) -> list[str]:
    """``--inspect``: fit ``case`` as execute_case does and describe each member's release (docstring)."""
    import torch

    from privbench.bench.evaluators import ksg_mi
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for
    from privbench.learners import make_learner

    sc = make_scenario(case.scenario, case.params)
    task = task_for(sc, case.observation, case.training_privacy, case.distortion)
    var = np.asarray(case.params["variances"], float)
    samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
    mechs = make_learner(case.learner, **case.learner_params).fit(samples, task, list(case.budgets),
                                                                   seed=case.seed, device="cpu")
    rng, out = np.random.default_rng(123), []
    for mech in mechs:
        mod = mech.module
        m, lo = (mod.M[0].detach().double().numpy(), mod.L[0].detach().double().numpy())
        cov_noise = lo.T @ lo
        i_aff = 0.5 * (np.linalg.slogdet(m.T @ np.diag(var) @ m + cov_noise)[1] - np.linalg.slogdet(cov_noise)[1])
        w = rng.standard_normal((2000, len(var))) * np.sqrt(var)
        with torch.no_grad():  # f on 2,000 W x 200 seeds each
            wt = torch.as_tensor(np.repeat(w, 200, 0), dtype=torch.float32)[None]
            eps = torch.randn((1, wt.shape[1], mod.n_noise), generator=torch.Generator().manual_seed(5))
            f = mod.net(torch.cat([mod._norm(wt), eps], -1))[0].double().numpy().reshape(2000, 200, -1)
        u = rng.standard_normal((400_000, len(var))) * np.sqrt(var)
        z = mech.release(u, np.random.default_rng(7))
        c = np.cov(np.hstack([u, z]).T)
        d = len(var)
        i_g = 0.5 * (np.linalg.slogdet(c[:d, :d])[1] + np.linalg.slogdet(c[d:, d:])[1] - np.linalg.slogdet(c)[1])
        k = ksg_mi(u[:80_000], z[:80_000], rng=np.random.default_rng(3))
        gains = np.linalg.svd(np.diag(np.sqrt(var)) @ m, compute_uv=False)
        out.append(f"  budget {mech.budget:<5.3g} gain {np.array2string(gains, precision=4)} I_affine {i_aff:.4f} "
                   f"var f {f.reshape(-1, d).var(0).sum():.4f} var E[f|W] {f.mean(1).var(0).sum():.4f} "
                   f"I_gauss(400k) {i_g:.5f} KSG(80k) {k.value:.4f} +- {k.stderr:.4f} "
                   f"distortion {((u - z) ** 2).sum(1).mean():.4f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=None, help="experiment (repeatable; default ppan-fig4)")
    ap.add_argument("--learner", default="ppan-seed")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default: the suite's)")
    ap.add_argument("--budget", type=float, action="append", default=None, help="only these budgets")
    ap.add_argument("--n-eval", type=int, default=None, help="evaluation rows (default: the suite's)")
    ap.add_argument("--learner-param", action="append", default=[], help="NAME=VALUE (JSON value)")
    ap.add_argument("--show-evaluators", action="store_true", help="print every leakage evaluation")
    ap.add_argument("--oracle", action="store_true",
                    help="ppan-fig4 only: score the exact reverse water-filling release, built as a ppan-seed "
                         "network (affine part only), instead of training: the evaluators' floor")
    ap.add_argument("--inspect", action="store_true",
                    help="ppan-seed on ppan-fig4 only: describe each fitted release (affine gain, exact affine "
                         "leakage, MLP variance, large-sample Gaussian and KSG leakage) instead of scoring it")
    args = ap.parse_args()
    suite = select_experiments(load_suite("paper", reps=args.reps), args.only or ["ppan-fig4"])
    extra = {k: parse_value(v) for k, v in (p.split("=", 1) for p in args.learner_param)}
    cases = [c for c in suite.cases if c.learner == args.learner]
    gaps: dict[str, list[tuple[float, float]]] = {}
    for case in cases:
        if extra:
            params = normalize_value({**case.learner_params, **extra})
            case = replace(case, learner_params_json=json.dumps(params, sort_keys=True))
        if args.n_eval:
            case = replace(case, n_eval=args.n_eval)
        if args.budget:
            case = case.with_budgets([b for b in case.budgets if any(abs(b - x) < 1e-9 for x in args.budget)])
        t0 = time.perf_counter()
        if args.inspect:
            lines = inspect_rows(case)
            print(f"# {case.experiment} {case.label()} ({time.perf_counter() - t0:.1f} s in all)", flush=True)
            print("\n".join(lines), flush=True)
            continue
        rows = oracle_rows(case) if args.oracle else execute_case(case, device="cpu")
        wall = time.perf_counter() - t0
        print(f"# {case.experiment} {case.label()} ({wall:.1f} s in all)", flush=True)
        for r in rows:
            if r["status"] != "ok":
                print(f"  budget {r['budget']:.3g}: {r['status']} {r['error']}")
                continue
            gaps.setdefault(case.experiment, []).append((float(r["budget"]), float(r["gap"])))
            print(f"  budget {r['budget']:<5.3g} leakage {r['leakage']:.4f} ({r['leakage_evaluator']}) "
                  f"distortion {r['distortion']:.4f} optimum {r['optimum_at_distortion']:.4f} "
                  f"gap {r['gap']:+.4f} train {r['train_time_s']:.2f} s/budget"
                  + (" BELOW-BOUND" if r.get("below_bound") else "")
                  + (" evaluators-disagree" if r.get("evaluators_disagree") else ""), flush=True)
            if args.show_evaluators:
                for e in json.loads(r["evaluations"]):
                    if e["metric"] == "mi":
                        print(f"      {e['evaluator']:24s} {e['value']:+.4f} +- {e['stderr']:.4f}")
    for exp, pts in gaps.items():
        g = np.array([x[1] for x in pts])
        per_b = {b: np.mean([x[1] for x in pts if x[0] == b]) for b in sorted({x[0] for x in pts})}
        print(f"{exp}: median gap {np.median(g):.4f}  worst {g.max():.4f}  ({len(g)} points); mean per budget: "
              + ", ".join(f"{b:g}: {v:.4f}" for b, v in per_b.items()))


if __name__ == "__main__":
    main()
