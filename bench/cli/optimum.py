"""``privbench optimum`` (the optimal tradeoff of a scenario) and ``privbench list``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from privbench.bench.cli.common import budget, param, unique_params
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
    opt.set_defaults(func=cmd_optimum)


def add_list(sub: Any) -> None:
    """Add the ``list`` command to the sub-parsers ``sub``."""
    lst = sub.add_parser("list", help="list registered things")
    lst.add_argument("what", choices=tuple(LISTERS), help="what to list")
    lst.set_defaults(func=cmd_list)


def cmd_optimum(args: argparse.Namespace) -> int:
    """Print the optimum of a scenario at each ``--budget``: a table, or JSON lines with ``--json``."""
    from privbench.datasets.scenarios import make_scenario
    from privbench.theory import resolve

    scenario = make_scenario(args.scenario, unique_params("--param", args.param))
    privacy, observation, family = resolve(scenario, args.privacy, args.observation, args.family, args.distortion)
    rows = optimum_rows(scenario, args.budget, privacy, observation, family, args.distortion)
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
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[3])


def cmd_list(args: argparse.Namespace) -> int:
    """Print the registered scenarios (with their parameters) or learners."""
    return LISTERS[args.what]()


def list_scenarios() -> int:
    """Print every scenario with its parameters and their defaults."""
    from privbench.datasets.scenarios import SCENARIOS

    for name, cls in SCENARIOS.items():
        print(f"{name}: {cls.summary}")
        for p in cls.PARAMS:
            default = "required" if p.required else ("optional" if p.default is None else f"default {p.default}")
            print(f"    {p.name:<10} {p.help} ({default})")
    return 0


def list_learners() -> int:
    """Print every learner (tasks, observations, privacy metrics, class), then plug-ins that failed to load."""
    from privbench.learners import available, plugin_errors

    for name, cls in available().items():
        print(f"{name}: {cls.summary}")
        print(f"    tasks: {', '.join(cls.serves)}; observation: {', '.join(cls.observations)}; "
              f"privacy: {', '.join(cls.privacies)}  ({cls.__module__}.{cls.__qualname__})")
    for name, err in plugin_errors().items():
        print(f"{name}: FAILED TO LOAD ({err})")
    return 0


#: What ``privbench list`` lists, in the order of its choices.
LISTERS = {"scenarios": list_scenarios, "learners": list_learners}
