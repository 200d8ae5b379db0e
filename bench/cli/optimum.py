"""``privbench optimum`` (the optimal tradeoff of a scenario) and ``privbench list``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from privbench.bench.cli.common import budget, param, unique_params
from privbench.datasets.errors import InputError
from privbench.datasets.vocabulary import DISTORTIONS, OBSERVATIONS, PRIVACIES


def add_optimum(sub: Any) -> None:
    """Add the ``optimum`` command to the sub-parsers ``sub``."""
    opt = sub.add_parser("optimum", help="optimal privacy leakage of a scenario at distortion budgets")
    opt.add_argument("scenario", metavar="SCENARIO", help="scenario name (see 'privbench list scenarios')")
    opt.add_argument("--param", type=param, action="append", default=[], metavar="NAME=VALUE",
                     help="scenario parameter (repeatable)")
    opt.add_argument("--budget", type=budget, action="append", required=True, metavar="B",
                     help="distortion budget (repeatable)")
    opt.add_argument("--privacy", choices=PRIVACIES, default=None,
                     help="privacy metric (default: map for binary-gmm, else mi)")
    opt.add_argument("--observation", choices=OBSERVATIONS, default=None,
                     help="what the mechanism observes: U only (useful) or (S, U) (full)")
    opt.add_argument("--family", default=None, help="mechanism family (binary-gmm only)")
    opt.add_argument("--distortion", choices=DISTORTIONS, default=None,
                     help="distortion other than the scenario's own: logloss = H(U | Z) in nats, "
                          "the privacy funnel (finite scenarios; a certified sandwich)")
    opt.add_argument("--json", action="store_true", help="one JSON object per budget, one per line")
    opt.add_argument("--guarantee", action="store_true",
                     help="also the (eps, delta)-IP the optimal leakage gives (Wang & Tay Theorem 1: mi -> KL, "
                          "chi2 -> chi-square, map -> TV for binary S), and strong IP / weak DP where the "
                          "optimal mechanism's joint is known")
    opt.add_argument("--eps", type=eps_value, default=1.0, metavar="EPS",
                     help="IP budget eps of --guarantee (default 1; DP is stated at 2 eps)")
    opt.set_defaults(func=cmd_optimum)


def add_list(sub: Any) -> None:
    """Add the ``list`` command to the sub-parsers ``sub``."""
    lst = sub.add_parser("list", help="list registered things")
    lst.add_argument("what", choices=tuple(LISTERS), help="what to list")
    lst.add_argument("--json", action="store_true", help="one JSON object per entry, one per line (as 'optimum --json')")
    lst.set_defaults(func=cmd_list)


def cmd_optimum(args: argparse.Namespace) -> int:
    """Print the optimum of a scenario at each ``--budget``: a table, or JSON lines with ``--json``."""
    from privbench.datasets.scenarios import make_scenario
    from privbench.theory import resolve

    scenario = make_scenario(args.scenario, unique_params("--param", args.param))
    privacy, observation, family = resolve(scenario, args.privacy, args.observation, args.family, args.distortion)
    rows = optimum_rows(scenario, args.budget, privacy, observation, family, args.distortion)
    if args.guarantee:
        for row in rows:
            row["guarantee"] = optimum_guarantee(scenario, row, args.eps)
    if args.json:
        for row in rows:
            print(json.dumps(row, sort_keys=False))
        return 0
    print_optimum_table(scenario, rows, privacy, observation, family)
    return 0


def optimum_rows(scenario: Any, budgets: list[float], privacy: str, observation: str | None,
                 family: str | None, distortion: str | None = None) -> list[dict[str, Any]]:
    """One JSON-able row per budget: the scenario, the optimum, its units, method and bound kind
    (certified bounds: ``lower`` and ``width`` too)."""
    from privbench.theory import optimum, units

    results = [(b, optimum(scenario, b, privacy, observation, family, distortion)) for b in budgets]
    rows: list[dict[str, Any]] = []
    for b, opt in results:
        row: dict[str, Any] = {
            "scenario": scenario.name,
            "scenario_id": scenario.id,
            "params": scenario.params(),
            "observation": observation,
            "privacy": privacy,
            "distortion": distortion or scenario.distortion_name,
            "budget": b,
            "optimum": opt.value,
            "units": units(privacy),
            "method": opt.method,
            "bound_kind": opt.bound_kind,
        }
        if opt.lower is not None:
            row["lower"] = opt.lower
            row["width"] = opt.value - opt.lower
        if opt.family is not None:
            row["family"] = opt.family
        if opt.mechanism is not None:
            row["mechanism"] = opt.mechanism
        if opt.certificate is not None:
            row["certificate"] = opt.certificate
        rows.append(row)
    return rows


def print_optimum_table(scenario: Any, rows: list[dict[str, Any]], privacy: str, observation: str | None,
                        family: str | None) -> None:
    """A header line, then budget, optimum, bound kind and method per row."""
    from privbench.theory import units

    head = f"{scenario.id}  privacy={privacy} ({units(privacy)})"
    if observation:
        head += f"  observation={observation}"
    head += f"  distortion={rows[0]['distortion'] if rows else scenario.distortion_name}"
    if family:
        head += f"  family={family}"
    print(head)
    table = [("budget", "optimum", "bound", "method")]
    for row in rows:
        value = f"{row['optimum']:.6f}" + (f" (lower {row['lower']:.6f}, width {row['width']:.2g})"
                                           if "lower" in row else "")
        table.append((f"{row['budget']:g}", value, row["bound_kind"], row["method"]))
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    for r, row in zip(table, [None, *rows]):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[3])
        if row is not None and "guarantee" in row:
            print("    " + guarantee_text(row["guarantee"]))


def eps_value(text: str) -> float:
    """``--eps``: a finite number >= 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--eps {text!r} is not a number (finite, >= 0)") from None
    if not 0 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"--eps {text!r} must be finite and >= 0")
    return v


def optimum_guarantee(scenario: Any, row: dict[str, Any], eps: float) -> dict[str, Any]:
    """The guarantee of one optimum row: Theorem 1 from its leakage; with a finite optimal channel,
    also strong IP (Corollary 1), weak DP (Lemma 1) and the exact deltas of its joint P(S, Z).

    Raises InputError where the metric gives none (``map`` with |S| > 2).
    """
    import numpy as np

    from privbench.bench.guarantee import scenario_priors
    from privbench.theory.guarantees import joint_guarantee, leakage_guarantee
    from privbench.theory.measures import release_joint

    privacy, priors = row["privacy"], scenario_priors(scenario)
    try:
        out = leakage_guarantee(privacy, row["optimum"], eps, priors)
    except InputError as exc:
        raise InputError(f"--guarantee: {exc}") from None
    out["of"] = "the achievable end" if row["bound_kind"] == "certified" else f"the {row['bound_kind']} optimum"
    mech = row.get("mechanism") or {}
    if mech.get("type") == "finite-channel" and priors is not None:
        p_sz = release_joint(scenario.joint(), np.asarray(mech["channel"]), mech["observation"]).sum(axis=1)
        joint = joint_guarantee(p_sz, privacy, eps)
        out.update({k: v for k, v in joint.items() if k.startswith(("strong", "dp", "exact"))})
        out["joint_level"] = joint["level"]
    return out


def guarantee_text(g: dict[str, Any]) -> str:
    """One line: the IP of the leakage, and the strong IP / DP / exact deltas where known."""
    text = (f"guarantee of {g['of']}: ({g['eps']:g}, {g['delta']:.4g})-IP [{g['source']}, "
            f"{g['divergence']} level {g['level']:.4g}]")
    if "dp_eps" in g:
        text += (f"; mechanism: strong ({g['eps']:g}, {g['strong_ip_delta']:.4g})-IP and "
                 f"({g['dp_eps']:g}, {g['dp_delta']:.4g})-DP [Corollary 1 + Lemma 1]; exact deltas: "
                 f"IP {g['exact_ip_delta']:.4g} and strong IP {g['exact_strong_ip_delta']:.4g} at eps {g['eps']:g}, "
                 f"DP {g['exact_dp_delta']:.4g} at eps {g['dp_eps']:g}")
    return text


def cmd_list(args: argparse.Namespace) -> int:
    """Print the registered scenarios (with their parameters) or learners; JSON lines with ``--json``."""
    return LISTERS[args.what](args.json)


def list_scenarios(as_json: bool = False) -> int:
    """Print every scenario with its parameters and their defaults."""
    from privbench.datasets.scenarios import SCENARIOS

    if as_json:
        for name, cls in SCENARIOS.items():
            params = {p.name: {"help": p.help, "required": bool(p.required),
                               "default": None if p.required else p.default} for p in cls.PARAMS}
            print(json.dumps({"name": name, "summary": cls.summary, "params": params}, default=str))
        return 0
    for name, cls in SCENARIOS.items():
        print(f"{name}: {cls.summary}")
        for p in cls.PARAMS:
            default = "required" if p.required else ("optional" if p.default is None else f"default {p.default}")
            print(f"    {p.name:<10} {p.help} ({default})")
    return 0


def list_learners(as_json: bool = False) -> int:
    """Print every learner (tasks, observations, privacy metrics, class, hyper-parameters with their
    defaults), then plug-ins that failed to load; with ``as_json`` one JSON object per learner."""
    import textwrap

    from privbench.learners import available, plugin_errors

    for name, cls in available().items():
        params = hyper_parameters(cls)
        if as_json:
            print(json.dumps({"name": name, "summary": cls.summary, "class": f"{cls.__module__}.{cls.__qualname__}",
                              "tasks": cls.declared().describe(), "observations": list(cls.observations),
                              "privacies": list(cls.privacies), "distortions": list(cls.distortions),
                              "params": params}, default=repr))
            continue
        print(f"{name}: {cls.summary}")
        print(f"    tasks: {cls.declared().describe()}; observation: {', '.join(cls.observations)}; "
              f"privacy: {', '.join(cls.privacies)}; distortion: {', '.join(cls.distortions)}  "
              f"({cls.__module__}.{cls.__qualname__})")
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "none"
        print(textwrap.fill(f"hyper-parameters: {shown}", width=110, initial_indent="    ",
                            subsequent_indent="        ", break_on_hyphens=False))
    for name, err in plugin_errors().items():
        print(json.dumps({"name": name, "error": str(err)}) if as_json else f"{name}: FAILED TO LOAD ({err})")
    if not as_json:
        print("(set with --learner-param NAME=VALUE; None: chosen from the schedule and the task)")
    return 0


def hyper_parameters(cls: type) -> dict[str, Any]:
    """A learner class's hyper-parameters and defaults: the keyword arguments of its ``__init__``."""
    import inspect

    sig = inspect.signature(cls.__init__)
    return {k: (REQUIRED if p.default is inspect.Parameter.empty else p.default) for k, p in sig.parameters.items()
            if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


class Required:
    """The "default" of a hyper-parameter without one: shown as ``REQUIRED``."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = Required()


#: What ``privbench list`` lists, in the order of its choices.
LISTERS = {"scenarios": list_scenarios, "learners": list_learners}
