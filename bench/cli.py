"""The ``privbench`` command line.

Bad input (unknown scenario, parameter, family; invalid value; a
(privacy, observation) pair without a known optimum) prints one line on stderr
and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from privbench.datasets.errors import InputError

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exits with 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(EXIT_BAD_INPUT)


def _param(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--param {text!r} must look like NAME=VALUE")
    return name.strip(), value.strip()


def _budget(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget {text!r} is not a number") from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    opt = sub.add_parser("optimum", help="optimal privacy leakage of a scenario at distortion budgets")
    opt.add_argument("scenario", metavar="SCENARIO", help="scenario name (see 'privbench list scenarios')")
    opt.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                     help="scenario parameter (repeatable)")
    opt.add_argument("--budget", type=_budget, action="append", required=True, metavar="B",
                     help="distortion budget (repeatable)")
    opt.add_argument("--privacy", choices=("mi", "map", "chi2"), default=None,
                     help="privacy metric (default: map for binary-gmm, else mi)")
    opt.add_argument("--observation", choices=("useful", "full"), default=None,
                     help="what the mechanism observes: U only (useful) or (S, U) (full)")
    opt.add_argument("--family", default=None, help="mechanism family (binary-gmm only)")
    opt.add_argument("--json", action="store_true", help="one JSON object per budget, one per line")
    opt.set_defaults(func=_cmd_optimum)

    lst = sub.add_parser("list", help="list registered things")
    lst.add_argument("what", choices=("scenarios", "learners"), help="what to list")
    lst.set_defaults(func=_cmd_list)
    return parser


def _cmd_optimum(args: argparse.Namespace) -> int:
    from privbench.datasets.scenarios import make_scenario
    from privbench.theory.optimum import _resolve, optimum, units

    params = dict(args.param)
    if len(params) != len(args.param):
        dup = [n for n, _ in args.param if sum(1 for m, _ in args.param if m == n) > 1][0]
        raise InputError(f"--param {dup} is given more than once")
    scenario = make_scenario(args.scenario, params)
    privacy, observation, family = _resolve(scenario, args.privacy, args.observation, args.family)
    results = [(b, optimum(scenario, b, privacy, observation, family)) for b in args.budget]
    rows: list[dict[str, Any]] = []
    for budget, opt in results:
        row: dict[str, Any] = {
            "scenario": scenario.name,
            "scenario_id": scenario.id,
            "params": scenario.params(),
            "observation": observation,
            "privacy": privacy,
            "distortion": scenario.distortion_name,
            "budget": budget,
            "optimum": opt.value,
            "units": units(privacy),
            "method": opt.method,
            "bound_kind": opt.bound_kind,
        }
        if opt.family is not None:
            row["family"] = opt.family
        if opt.mechanism is not None:
            row["mechanism"] = opt.mechanism
        if opt.certificate is not None:
            row["certificate"] = opt.certificate
        rows.append(row)
    if args.json:
        for row in rows:
            print(json.dumps(row, sort_keys=False))
        return 0
    head = f"{scenario.id}  privacy={privacy} ({units(privacy)})"
    if observation:
        head += f"  observation={observation}"
    head += f"  distortion={scenario.distortion_name}"
    if family:
        head += f"  family={family}"
    print(head)
    table = [("budget", "optimum", "bound", "method")]
    for row in rows:
        table.append((f"{row['budget']:g}", f"{row['optimum']:.6f}", row["bound_kind"], row["method"]))
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[3])
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    if args.what == "learners":
        return _list_learners()
    from privbench.datasets.scenarios import SCENARIOS

    for name, cls in SCENARIOS.items():
        print(f"{name}: {cls.summary}")
        for p in cls.PARAMS:
            default = "required" if p.required else ("optional" if p.default is None else f"default {p.default}")
            print(f"    {p.name:<10} {p.help} ({default})")
    return 0


def _list_learners() -> int:
    from privbench.learners import available, plugin_errors

    for name, cls in available().items():
        print(f"{name}: {cls.summary}")
        print(f"    tasks: {', '.join(cls.serves)}; observation: {', '.join(cls.observations)}; "
              f"privacy: {', '.join(cls.privacies)}  ({cls.__module__}.{cls.__qualname__})")
    for name, err in plugin_errors().items():
        print(f"{name}: FAILED TO LOAD ({err})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (also used by the console script)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        sys.stderr.write(f"privbench: error: {exc}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("privbench: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
