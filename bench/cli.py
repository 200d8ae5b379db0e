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
    _add_run(sub)
    from privbench.bench.cli_report import add_commands

    add_commands(sub, _param)
    return parser


def _cmd_optimum(args: argparse.Namespace) -> int:
    from privbench.datasets.scenarios import make_scenario
    from privbench.theory import optimum, resolve, units

    params = dict(args.param)
    if len(params) != len(args.param):
        dup = [n for n, _ in args.param if sum(1 for m, _ in args.param if m == n) > 1][0]
        raise InputError(f"--param {dup} is given more than once")
    scenario = make_scenario(args.scenario, params)
    privacy, observation, family = resolve(scenario, args.privacy, args.observation, args.family)
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


RUN_EPILOG = """\
A suite (--suite quick|regression|FILE.yaml) or one ad-hoc experiment (--scenario ...
--learner ... --budget ...; same names as 'privbench optimum').  Results go to
--out DIR (default: results/runs/<suite>, or results/runs/adhoc), one parquet part per
finished case in DIR/records/; read them with 'privbench report DIR'.  Each case's seed
is a hash of its parameters and repetition: the same command gives the same numbers.
A directory already holding cases of this run is refused unless --resume is given
(then finished cases are skipped).  A case that fails or exceeds --timeout is recorded
with its error and the run goes on.

examples:
  privbench run --suite quick
  privbench run --scenario symmetric-pair --param m=6 --param p=0.7 --observation full \\
      --privacy mi --learner randomized-response --budget 0.1 --budget 0.3 --seeds 3 --out DIR
"""


def _add_run(sub: Any) -> None:
    run = sub.add_parser("run", help="train learners on a suite or an ad-hoc case, evaluate, score, store",
                         description="Train learners, evaluate their releases independently, score the gap "
                                     "to the optimum and store one row per case and budget.",
                         epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = run.add_argument_group("what to run")
    what.add_argument("--suite", metavar="NAME|FILE", help="shipped suite (quick, regression) or a YAML suite file")
    what.add_argument("--only", action="append", default=[], metavar="EXPERIMENT",
                      help="with --suite: run only this experiment (repeatable; 'ppan-fig5' also selects "
                           "'ppan-fig5/useful' and 'ppan-fig5/full')")
    what.add_argument("--smoke", action="store_true",
                      help="with --suite: a miniature of every experiment (one seed, two budgets, tiny "
                           "samples and schedules): checks the code paths in seconds, numbers mean nothing")
    what.add_argument("--scenario", help="ad-hoc: scenario name (see 'privbench list scenarios')")
    what.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                      help="ad-hoc: scenario parameter (repeatable)")
    what.add_argument("--observation", choices=("useful", "full"), default=None,
                      help="ad-hoc: what the mechanism observes")
    what.add_argument("--privacy", choices=("mi", "map", "chi2"), default=None,
                      help="ad-hoc: privacy metric (default: map for binary-gmm, else mi)")
    what.add_argument("--family", default=None, help="ad-hoc: mechanism family of the bound (binary-gmm only)")
    what.add_argument("--objective", choices=("mi", "map", "chi2"), default=None,
                      help="ad-hoc: metric the learner trains for (default: --privacy if it serves it, "
                           "else its own)")
    what.add_argument("--learner", action="append", default=[], metavar="NAME|module:Class",
                      help="ad-hoc: learner (repeatable; see 'privbench list learners')")
    what.add_argument("--learner-param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                      help="ad-hoc: learner hyper-parameter (repeatable; applies to every --learner)")
    what.add_argument("--budget", type=_budget, action="append", default=[], metavar="B",
                      help="ad-hoc: distortion budget (repeatable; trained as one batched fit)")
    what.add_argument("--n-train", type=int, default=None, metavar="N",
                      help="ad-hoc: training samples (default 20000)")
    what.add_argument("--n-eval", type=int, default=None, metavar="N",
                      help="ad-hoc: fresh evaluation samples (default 20000)")
    what.add_argument("--seeds", type=int, default=None, metavar="N",
                      help="repetitions per case (default: the suite's, 1 ad hoc)")
    how = run.add_argument_group("how to run it")
    how.add_argument("--out", metavar="DIR", help="results directory (default: results/runs/<suite>)")
    how.add_argument("--resume", action="store_true", help="continue into DIR, skipping cases already stored")
    how.add_argument("--retry-failed", action="store_true",
                     help="with --resume: run again cases stored as failed or timed out")
    how.add_argument("--jobs", type=int, default=None, metavar="N",
                     help="parallel worker processes (default: the CPU cores available)")
    how.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                     help="where learners train (default auto: cuda if available)")
    how.add_argument("--backend", choices=("local", "dask"), default="local",
                     help="local processes, or Dask distributed (default local)")
    how.add_argument("--scheduler", metavar="ADDR",
                     help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: a local cluster)")
    how.add_argument("--timeout", type=float, default=None, metavar="S",
                     help="per-case time limit in seconds; the case is killed and recorded 'timeout' "
                          "(default: the suite's, else none)")
    how.add_argument("--csv", nargs="?", const="", default=None, metavar="FILE",
                     help="also export the whole results table as CSV (default FILE: DIR/results.csv)")
    how.add_argument("--quiet", action="store_true", help="no progress output")
    run.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    import os
    import shlex

    from privbench.bench.run import run_cases
    from privbench.bench.store import export_csv
    from privbench.bench.suites import (DEFAULT_N_EVAL, adhoc_suite, load_suite, select_experiments,
                                        smoke_suite)

    adhoc = {"--scenario": args.scenario, "--param": args.param, "--observation": args.observation,
             "--privacy": args.privacy, "--family": args.family, "--objective": args.objective,
             "--learner": args.learner,
             "--learner-param": args.learner_param, "--budget": args.budget, "--n-train": args.n_train,
             "--n-eval": args.n_eval}
    for flag, given in (("--only", args.only), ("--smoke", args.smoke)):
        if given and not args.suite:
            raise InputError(f"{flag} applies to a --suite; it cannot be used in an ad-hoc run")
    cwd_added = os.getcwd() not in sys.path
    if cwd_added:  # module:Class learners from the working directory (lowest priority)
        sys.path.append(os.getcwd())
    if args.suite:
        given = [k for k, v in adhoc.items() if v not in (None, [])]
        if given:
            raise InputError(f"{given[0]} is for ad-hoc runs; it cannot be combined with --suite")
        suite = load_suite(args.suite, reps=args.seeds)
        if args.only:
            suite = select_experiments(suite, args.only)
        if args.smoke:
            suite = smoke_suite(suite)
    elif args.scenario:
        for name, vals in (("--param", args.param), ("--learner-param", args.learner_param)):
            seen = [n for n, _ in vals]
            dup = next((n for n in seen if seen.count(n) > 1), None)
            if dup:
                raise InputError(f"{name} {dup} is given more than once")
        suite = adhoc_suite(args.scenario, dict(args.param), args.observation, args.privacy, args.family,
                            args.learner, dict(args.learner_param), args.budget, reps=args.seeds or 1,
                            n_train=args.n_train, n_eval=args.n_eval or DEFAULT_N_EVAL,
                            objective=args.objective)
    else:
        raise InputError("privbench run needs --suite NAME or an ad-hoc --scenario (see 'privbench run --help')")
    if cwd_added and any(":" in c.learner for c in suite.cases):  # ... and in Dask's worker processes
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), os.getcwd()]))
    if args.retry_failed and not args.resume:
        raise InputError("--retry-failed needs --resume")
    out = args.out or os.path.join("results", "runs", suite.name)
    timeout = args.timeout if args.timeout is not None else suite.timeout
    try:
        summary = run_cases(suite.cases, out, suite=suite.name, jobs=args.jobs, device=args.device,
                            timeout=timeout, backend=args.backend, scheduler=args.scheduler, resume=args.resume,
                            retry_failed=args.retry_failed, progress="none" if args.quiet else None,
                            command=" ".join(shlex.quote(a) for a in sys.argv))
    except KeyboardInterrupt:
        sys.stderr.write(f"privbench: interrupted; finished cases are stored in {out}: add --resume to continue\n")
        return 130
    for line in summary.failures:
        print(f"  {line}")
    print(summary.line())
    if args.csv is not None:
        print(f"CSV: {export_csv(out, args.csv or os.path.join(out, 'results.csv'))}")
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
