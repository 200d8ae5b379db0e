"""``privbench run``: train learners on a suite or an ad-hoc experiment, evaluate, score, store."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from privbench.bench.cli.common import (DEVICES, EXIT_CASES_FAILED, EXIT_INTERRUPTED, budget, check_output_file,
                                        command_line, count_type, param, unique_params)
from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_JOBS, MAX_REPS, MAX_SAMPLES, MAX_THREADS
from privbench.datasets.vocabulary import DISTORTIONS, OBSERVATIONS, PRIVACIES

RUN_EPILOG = """\
A suite (--suite quick|regression|FILE.yaml) or one ad-hoc experiment (--scenario ...
--learner ... --budget ...; same names as 'privbench optimum').  Results go to
--out DIR (default: results/runs/<suite>, or results/runs/adhoc), one parquet part per
finished case in DIR/records/; read them with 'privbench report DIR'.  Each case's seed
is a hash of its parameters and repetition: the same command gives the same numbers.
A directory already holding cases of this run is refused unless --resume is given
(then finished cases are skipped).  A case that fails or exceeds --timeout is recorded
with its error and the run goes on.  Exit status: 0 when every case is ok; 1 when a case
failed, timed out or was stored inconsistent; 2 bad input (nothing run); 74 a file could
not be written (a full disk: what is stored is intact, continue with --resume); 130 Ctrl-C.

examples:
  privbench run --suite quick
  privbench run --scenario symmetric-pair --param m=6 --param p=0.7 --observation full \\
      --privacy mi --learner randomized-response --budget 0.1 --budget 0.3 --seeds 3 --out DIR
  privbench run --scenario digits --param labeling=digit --observation useful --privacy map \
      --distortion logloss --learner ppan-logloss-image --budget 0.1 --budget 0.4 --out DIR
"""


def add_run(sub: Any) -> None:
    """Add the ``run`` command to the sub-parsers ``sub``."""
    run = sub.add_parser("run", help="train learners on a suite or an ad-hoc case, evaluate, score, store",
                         description="Train learners, evaluate their releases independently, score the gap "
                                     "to the optimum and store one row per case and budget.",
                         epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_what(run.add_argument_group("what to run"))
    add_how(run.add_argument_group("how to run it"))
    run.set_defaults(func=cmd_run)


def add_what(what: Any) -> None:
    """The options that choose the cases: a suite, or an ad-hoc experiment."""
    what.add_argument("--suite", metavar="NAME|FILE",
                      help="shipped suite (quick, regression, funnel, paper) or a YAML suite file")
    what.add_argument("--only", action="append", default=[], metavar="EXPERIMENT",
                      help="with --suite: run only this experiment (repeatable; 'ppan-fig5' also selects "
                           "'ppan-fig5/useful' and 'ppan-fig5/full')")
    what.add_argument("--smoke", action="store_true",
                      help="with --suite: a miniature of every experiment (one seed unless --seeds, two "
                           "budgets, tiny samples and schedules): checks the code paths in seconds, numbers "
                           "mean nothing")
    what.add_argument("--scenario", help="ad-hoc: scenario name (see 'privbench list scenarios')")
    what.add_argument("--param", type=param, action="append", default=[], metavar="NAME=VALUE",
                      help="ad-hoc: scenario parameter (repeatable)")
    what.add_argument("--observation", choices=OBSERVATIONS, default=None,
                      help="ad-hoc: what the mechanism observes")
    what.add_argument("--privacy", choices=PRIVACIES, default=None,
                      help="ad-hoc: privacy metric (default: map for binary-gmm, else mi)")
    what.add_argument("--family", default=None, help="ad-hoc: mechanism family of the bound (binary-gmm only)")
    what.add_argument("--distortion", choices=DISTORTIONS, default=None,
                      help="ad-hoc: a distortion other than the scenario's own: logloss = H(U | Z) in nats, the "
                           "privacy funnel (finite scenarios: scored against a certified sandwich; image "
                           "scenarios: the utility label's log-loss, measured from above by a fresh "
                           "classifier's held-out cross-entropy, no optimum); a scenario that cannot state its "
                           "task for it is refused")
    what.add_argument("--objective", choices=PRIVACIES, default=None,
                      help="ad-hoc: metric the learner trains for (default: --privacy if it serves it, "
                           "else its own)")
    what.add_argument("--learner", action="append", default=[], metavar="NAME|module:Class",
                      help="ad-hoc: learner (repeatable; see 'privbench list learners')")
    what.add_argument("--learner-param", type=param, action="append", default=[], metavar="NAME=VALUE",
                      help="ad-hoc: learner hyper-parameter (repeatable; applies to every --learner; "
                           "numbers, True/False and lists such as hidden=(64,64) are typed)")
    what.add_argument("--budget", type=budget, action="append", default=[], metavar="B",
                      help="ad-hoc: distortion budget (repeatable; trained as one batched fit)")
    what.add_argument("--n-train", type=count_type("--n-train", 2, MAX_SAMPLES), default=None, metavar="N",
                      help="ad-hoc: training samples (default 20000)")
    what.add_argument("--n-eval", type=count_type("--n-eval", 2, MAX_SAMPLES), default=None, metavar="N",
                      help="ad-hoc: fresh evaluation samples (default 20000)")
    what.add_argument("--seeds", type=count_type("--seeds", 1, MAX_REPS), default=None, metavar="N",
                      help="repetitions per case (default: the suite's, 1 ad hoc)")


def add_how(how: Any) -> None:
    """The options that say where and how the cases run and where they are stored."""
    how.add_argument("--out", metavar="DIR", help="results directory (default: results/runs/<suite>)")
    how.add_argument("--resume", action="store_true", help="continue into DIR, skipping cases already stored")
    how.add_argument("--retry-failed", action="store_true",
                     help="with --resume: run again cases stored as failed or timed out")
    how.add_argument("--jobs", type=count_type("--jobs", 1, MAX_JOBS), default=None, metavar="N",
                     help="parallel worker processes (default: the CPU cores available)")
    how.add_argument("--threads", type=count_type("--threads", 1, MAX_THREADS), default=None, metavar="N",
                     help="torch threads per worker process (default 1: fastest for small networks; "
                          "local backend)")
    how.add_argument("--device", choices=DEVICES, default="auto",
                     help="where learners train (default auto: cuda for the image learners where a GPU is "
                          "available, cpu for the rest; cuda: every learner on the GPU)")
    how.add_argument("--backend", choices=("local", "dask"), default="local",
                     help="local processes, or Dask distributed (default local)")
    how.add_argument("--scheduler", metavar="ADDR",
                     help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: a local cluster)")
    how.add_argument("--timeout", type=float, default=None, metavar="S",
                     help="per-case time limit in seconds; the case is killed and recorded 'timeout' "
                          "(default: the suite's, else none)")
    how.add_argument("--csv", nargs="?", const=True, default=None, metavar="FILE",
                     help="also export the whole results table as CSV (default FILE: DIR/results.csv)")
    how.add_argument("--quiet", action="store_true", help="no progress output")


def cmd_run(args: argparse.Namespace) -> int:
    """Run the chosen cases into ``--out``; print failures and a summary line (130 on Ctrl-C)."""
    from privbench.bench.run import run_cases
    from privbench.bench.store import export_csv

    for flag, given in (("--only", args.only), ("--smoke", args.smoke)):
        if given and not args.suite:
            raise InputError(f"{flag} applies to a --suite; it cannot be used in an ad-hoc run")
    cwd_added = os.getcwd() not in sys.path
    if cwd_added:  # module:Class learners from the working directory (lowest priority)
        sys.path.append(os.getcwd())
    suite = chosen_suite(args)
    if cwd_added and any(":" in c.learner for c in suite.cases):  # ... and in Dask's worker processes
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), os.getcwd()]))
    if args.retry_failed and not args.resume:
        raise InputError("--retry-failed needs --resume")
    check_output_file("--csv", None if args.csv in (None, True) else args.csv)
    out = args.out or os.path.join("results", "runs", suite.name)
    if args.csv not in (None, True) and os.path.abspath(args.csv) == os.path.abspath(out):
        raise InputError(f"--csv {args.csv!r} is the results directory itself; give a file name")
    timeout = args.timeout if args.timeout is not None else suite.timeout
    try:
        summary = run_cases(suite.cases, out, suite=suite.name, jobs=args.jobs, device=args.device,
                            timeout=timeout, backend=args.backend, scheduler=args.scheduler, resume=args.resume,
                            retry_failed=args.retry_failed, progress="none" if args.quiet else None,
                            command=command_line(sys.argv), threads=args.threads)
    except KeyboardInterrupt:
        sys.stderr.write(f"privbench: interrupted; finished cases are stored in {out}: add --resume to continue\n")
        return EXIT_INTERRUPTED
    for line in summary.failures:
        print(f"  {line}")
    print(summary.line())
    print(summary.flag_line())
    if suite.skipped:  # tasks a learner of the suite does not serve (Learner.supports): not run, not failed
        print(f"not run: {len(suite.skipped)} task(s) of {suite.skipped_experiments()} (experiment, learner) "
              "pair(s) the learner does not serve (privbench list learners)")
    if args.csv is not None:
        print(f"CSV: {export_csv(out, os.path.join(out, 'results.csv') if args.csv is True else args.csv)}")
    for line in next_commands(args, out, summary.not_ok()):
        print(line)
    return EXIT_CASES_FAILED if summary.not_ok() else 0


def next_commands(args: argparse.Namespace, out: str, not_ok: int) -> list[str]:
    """What to run next: the report, and the same run with --resume --retry-failed when a case failed."""
    lines = [f"next: privbench report {shlex.quote(out)}"]
    if not_ok:
        argv = [a for a in getattr(args, "argv", []) if a not in ("--resume", "--retry-failed")]
        if args.out is None:
            argv += ["--out", out]
        lines.append("rerun what failed: " + command_line(["privbench", *argv, "--resume", "--retry-failed"]))
    return lines


def chosen_suite(args: argparse.Namespace) -> Any:
    """The :class:`~privbench.bench.suites.Suite` that ``--suite`` or the ad-hoc options describe."""
    from privbench.bench.suites import DEFAULT_N_EVAL, adhoc_suite, load_suite, select_experiments, smoke_suite

    adhoc = {"--scenario": args.scenario, "--param": args.param, "--observation": args.observation,
             "--privacy": args.privacy, "--family": args.family, "--objective": args.objective,
             "--learner": args.learner, "--learner-param": args.learner_param, "--budget": args.budget,
             "--n-train": args.n_train, "--n-eval": args.n_eval, "--distortion": args.distortion}
    if args.suite:
        given = [k for k, v in adhoc.items() if v not in (None, [])]
        if given:
            raise InputError(f"{given[0]} is for ad-hoc runs; it cannot be combined with --suite")
        suite = load_suite(args.suite, reps=args.seeds)
        if args.only:
            suite = select_experiments(suite, args.only)
        if not args.smoke:
            return suite
        small = smoke_suite(suite)  # repetition 0; --seeds N asks for N of them
        if args.seeds:
            from dataclasses import replace

            small = replace(small, cases=[replace(c, rep=r) for r in range(args.seeds) for c in small.cases])
        return small
    if args.scenario:
        params = unique_params("--param", args.param)
        learner_params = unique_params("--learner-param", args.learner_param)
        return adhoc_suite(args.scenario, params, args.observation, args.privacy, args.family,
                           args.learner, learner_params, args.budget, reps=args.seeds or 1,
                           n_train=args.n_train, n_eval=DEFAULT_N_EVAL if args.n_eval is None else args.n_eval,
                           objective=args.objective, distortion=args.distortion)
    raise InputError("privbench run needs --suite NAME or an ad-hoc --scenario (see 'privbench run --help')")
