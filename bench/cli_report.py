"""``privbench report``, ``privbench compare`` and ``privbench check`` (added to bench/cli.py's parser)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from privbench.datasets.errors import InputError

EXIT_CHECK_FAILED = 1


def add_commands(sub: Any, param_type: Any) -> None:
    rep = sub.add_parser("report", help="tradeoff plots, gap tables, flags and timings of a results directory")
    rep.add_argument("dir", metavar="DIR", help="results directory written by 'privbench run'")
    rep.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (default DIR/report.html)")
    rep.add_argument("--markdown", metavar="FILE", help="write a Markdown report with PNG figures beside it "
                                                        "(default DIR/report.md)")
    rep.add_argument("--title", default=None, help="report title")
    rep.set_defaults(func=_cmd_report)

    cmp_ = sub.add_parser("compare", help="per case, which of two results directories is better, beyond noise?")
    cmp_.add_argument("dir_a", metavar="DIR_A")
    cmp_.add_argument("dir_b", metavar="DIR_B")
    cmp_.add_argument("--csv", metavar="FILE", help="also write the comparison table as CSV")
    cmp_.set_defaults(func=_cmd_compare)

    chk = sub.add_parser("check", help="regression-test a learner against stored baselines (exit 1 on regression)",
                         description="Run a suite with LEARNER in place of the suite's learners (every experiment "
                                     "it serves) and compare each point's mean gap with results/baselines/"
                                     "SUITE.json. Exit 0: all within tolerance; 1: a regression (listed); 2: bad input.")
    chk.add_argument("--learner", metavar="NAME|module:Class", help="learner to check (registered or module:Class)")
    chk.add_argument("--learner-param", type=param_type, action="append", default=[], metavar="NAME=VALUE")
    chk.add_argument("--suite", default="regression", help="suite to run (default: regression)")
    chk.add_argument("--baselines", metavar="FILE", help="baseline file (default: results/baselines/SUITE.json)")
    chk.add_argument("--out", metavar="DIR", help="keep the run's results here (default: a temporary directory)")
    chk.add_argument("--resume", action="store_true", help="continue a run in --out")
    chk.add_argument("--jobs", type=int, default=None, metavar="N")
    chk.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    chk.add_argument("--write-baselines", action="store_true",
                     help="instead of checking: run the suite's own learners and write the baseline file")
    chk.set_defaults(func=_cmd_check)


def _cmd_report(args: argparse.Namespace) -> int:
    from privbench.bench.reports import gap_table, write_html, write_markdown
    from privbench.bench.store import read_records

    df = read_records(args.dir)
    if df.empty:
        raise InputError(f"results directory {args.dir!r} holds no records yet")
    title = args.title or f"privbench report: {Path(args.dir).name}"
    html = args.html or (None if args.markdown else os.path.join(args.dir, "report.html"))
    md = args.markdown or (None if args.html else os.path.join(args.dir, "report.md"))
    table = gap_table(df)
    if table.empty:
        from privbench.bench.reports import no_optimum_table

        table = no_optimum_table(df)  # scenarios with no known optimum: their learned points
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}") if not table.empty else "no successful cases")
    from privbench.bench.reports import suite_metadata, write_paper_report
    from privbench.bench.store import read_manifests

    _, meta, order = suite_metadata(df)
    if meta:  # a suite with `paper:` blocks (the paper suite): the report beside the papers' claims
        try:
            for path in write_paper_report(df, meta, order, md, html, read_manifests(args.dir),
                                           title=args.title or "privbench: the papers, theory versus learned",
                                           command=" ".join(shlex.quote(a) for a in ["privbench", *sys.argv[1:]])):
                print(f"wrote {path}")
        except OSError as exc:
            raise InputError(f"cannot write report ({exc.strerror or exc})") from None
        return 0
    for path, writer in ((html, write_html), (md, write_markdown)):
        if path:
            try:
                print(f"wrote {writer(df, path, title)}")
            except OSError as exc:
                raise InputError(f"cannot write report {path!r} ({exc.strerror or exc})") from None
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from privbench.bench.reports import compare
    from privbench.bench.store import read_records

    a, b = read_records(args.dir_a), read_records(args.dir_b)
    res = compare(a, b)
    if res.empty:
        print("no common successful cases")
        return 0
    cols = ["learner", "scenario_id", "observation", "privacy", "budget", "n_train", "gap_a", "gap_b", "better",
            "beyond_noise", "p_value"]
    print(res[[c for c in cols if c in res.columns]].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    both = res[res["better"].isin(["A", "B"])]
    print(f"A better beyond noise: {int(((both['better'] == 'A') & both['beyond_noise']).sum())}, "
          f"B better beyond noise: {int(((both['better'] == 'B') & both['beyond_noise']).sum())}, "
          f"within noise: {int((~both['beyond_noise']).sum())}, ties: {int((res['better'] == 'tie').sum())}, "
          f"compared: {len(both) + int((res['better'] == 'tie').sum())}")
    if args.csv:
        res.to_csv(args.csv, index=False)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from privbench.bench.check import (check_against, default_baseline_file, make_baselines, read_baselines,
                                       write_baselines)
    from privbench.bench.run import run_cases
    from privbench.bench.store import read_records
    from privbench.bench.suites import load_suite

    command = " ".join(shlex.quote(a) for a in sys.argv)
    if args.write_baselines:
        if args.learner:
            raise InputError("--write-baselines uses the suite's own learners; drop --learner")
        suite = load_suite(args.suite)
    else:
        if not args.learner:
            raise InputError("privbench check needs --learner NAME or module:Class (or --write-baselines)")
        if ":" in args.learner and os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        suite = load_suite(args.suite, learners={args.learner: dict(args.learner_param)})
    if not suite.cases:
        raise InputError(f"learner {args.learner!r} serves no experiment of suite {args.suite!r}")
    baseline_file = Path(args.baselines) if args.baselines else default_baseline_file(suite.name)
    baselines = None if args.write_baselines else read_baselines(baseline_file)
    with tempfile.TemporaryDirectory(prefix="privbench-check-") as tmp:
        out = args.out or os.path.join(tmp, "run")
        summary = run_cases(suite.cases, out, suite=suite.name, jobs=args.jobs, device=args.device,
                            timeout=suite.timeout, resume=args.resume, command=command)
        print(summary.line())
        df = read_records(out)
    if args.write_baselines:
        path = write_baselines(make_baselines(df, suite.name, command), baseline_file)
        print(f"wrote {path}")
        return 0
    failures, notes, checked = check_against(df, baselines)  # type: ignore[arg-type]
    for line in notes:
        print(f"note: {line}")
    for line in failures:
        print(f"REGRESSION: {line}")
    print(f"{checked} points checked against {baseline_file}: {len(failures)} regression(s)")
    return EXIT_CHECK_FAILED if failures else 0
