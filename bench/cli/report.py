"""``privbench report`` (tables and report files of a results directory) and ``privbench compare``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from privbench.bench.cli.common import EXIT_COMPARE_WORSE, check_output_file, command_line
from privbench.datasets.errors import InputError


def add_report(sub: Any) -> None:
    """Add the ``report`` command to the sub-parsers ``sub``."""
    rep = sub.add_parser("report", help="tradeoff plots, gap tables, flags and timings of a results directory")
    rep.add_argument("dir", metavar="DIR", help="results directory written by 'privbench run'")
    rep.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (default DIR/report.html)")
    rep.add_argument("--markdown", metavar="FILE", help="write a Markdown report with PNG figures beside it "
                                                        "(default DIR/report.md)")
    rep.add_argument("--title", default=None, help="report title")
    rep.set_defaults(func=cmd_report)


def add_compare(sub: Any) -> None:
    """Add the ``compare`` command to the sub-parsers ``sub``."""
    cmp_ = sub.add_parser("compare", help="per case, which of two results directories is better, beyond noise?",
                          description="Pair the points of DIR_A and DIR_B (scenario, observation, privacy, family, "
                                      "learner, budget, n_train) and say which side has the smaller gap: Welch's "
                                      "t-test over seeds, Benjamini-Hochberg corrected over all pairs tested (false "
                                      "discovery rate 5%); with one seed, beyond the measurements' tolerance. "
                                      "Exit 0: B is nowhere worse beyond noise (ties, better); 1: B is worse than "
                                      "A beyond noise on some point (unless --fail-on none); 2: bad input.")
    cmp_.add_argument("dir_a", metavar="DIR_A", help="results directory A (the reference, e.g. before a change)")
    cmp_.add_argument("dir_b", metavar="DIR_B", help="results directory B (compared with A, e.g. after a change)")
    cmp_.add_argument("--csv", metavar="FILE", help="also write the comparison table as CSV")
    cmp_.add_argument("--allow-param-mismatch", action="store_true",
                      help="also compare points whose learner hyper-parameters differ (each such pair is "
                           "named); by default they are not paired")
    cmp_.add_argument("--fail-on", choices=("worse", "none"), default="worse",
                      help="exit 1 when B is worse than A beyond noise on any point (worse, the default), or "
                           "never (none); as pytest-benchmark's --benchmark-compare-fail")
    cmp_.set_defaults(func=cmd_compare)


def cmd_report(args: argparse.Namespace) -> int:
    """Print the gap table of ``DIR`` and write its HTML and/or Markdown report.

    A suite with ``paper:`` blocks (the paper suite) gets the paper report: the
    learned points beside the papers' own claims.
    """
    from privbench.bench.reports import no_optimum_table, ranking_frame, ranking_table, suite_metadata
    from privbench.bench.store import read_records

    check_output_file("--html", args.html)
    check_output_file("--markdown", args.markdown)
    df = read_records(args.dir)
    if df.empty:
        raise InputError(f"results directory {args.dir!r} holds no records yet")
    html = args.html or (None if args.markdown else os.path.join(args.dir, "report.html"))
    md = args.markdown or (None if args.html else os.path.join(args.dir, "report.md"))
    table = ranking_table(ranking_frame(df))  # the strict gap, budget respected, best per experiment first
    if table.empty:
        table = no_optimum_table(df)  # scenarios with no known optimum: their learned points
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}", max_colwidth=40)
          if not table.empty else "no successful cases")
    _, meta, order = suite_metadata(df)
    if meta:
        write_paper(args, df, meta, order, md, html)
    else:
        write_plain(df, md, html, args.title or f"privbench report: {Path(args.dir).name}",
                    command_line(["privbench", *sys.argv[1:]]))
    return 0


def write_paper(args: argparse.Namespace, df: Any, meta: Any, order: Any, md: str | None,
                html: str | None) -> None:
    """Write the paper report (the suite's ``paper:`` blocks beside the learned points)."""
    from privbench.bench.reports import write_paper_report
    from privbench.bench.store import read_manifests

    try:
        for path in write_paper_report(df, meta, order, md, html, read_manifests(args.dir),
                                       title=args.title or "privbench: the papers, theory versus learned",
                                       command=command_line(["privbench", *sys.argv[1:]])):
            print(f"wrote {path}")
    except OSError as exc:
        raise InputError(f"cannot write report ({exc.strerror or exc})") from None


def write_plain(df: Any, md: str | None, html: str | None, title: str, command: str = "") -> None:
    """Write the HTML and/or Markdown report of any results table."""
    from privbench.bench.reports import write_generic

    try:
        for path in write_generic(df, html, md, title, command):
            print(f"wrote {path}")
    except OSError as exc:
        raise InputError(f"cannot write report ({exc.strerror or exc})") from None


def cmd_compare(args: argparse.Namespace) -> int:
    """Print, per common point, which directory's learner has the smaller gap and whether beyond noise;
    1 when B is worse beyond noise somewhere (``--fail-on worse``)."""
    from privbench.bench.reports import compare
    from privbench.bench.store import read_records

    check_output_file("--csv", args.csv)
    a, b = read_records(args.dir_a), read_records(args.dir_b)
    for name, df in ((args.dir_a, a), (args.dir_b, b)):
        if df.empty:
            raise InputError(f"results directory {name!r} holds no records yet")
    res = compare(a, b, allow_param_mismatch=args.allow_param_mismatch)
    if res.empty:
        print("no common successful cases")
        return 0
    cols = ["learner", "scenario_id", "observation", "privacy", "budget", "n_train", "gap_a", "gap_b", "better",
            "beyond_noise", "p_value", "q_value"]
    print(res[[c for c in cols if c in res.columns]].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    for _, r in res[res["params_differ"]].iterrows():
        what = ("compared anyway (--allow-param-mismatch)" if args.allow_param_mismatch
                else "not paired (--allow-param-mismatch compares them)")
        print(f"learner parameters differ: {r['learner']} {r['scenario_id']} budget {r['budget']:g}: "
              f"A {r['params_a']}, B {r['params_b']}; {what}")
    both = res[res["better"].isin(["A", "B"])]
    worse = int(((both["better"] == "A") & both["beyond_noise"]).sum())
    print(f"A better beyond noise: {worse}, "
          f"B better beyond noise: {int(((both['better'] == 'B') & both['beyond_noise']).sum())}, "
          f"within noise: {int((~both['beyond_noise']).sum())}, ties: {int((res['better'] == 'tie').sum())}, "
          f"compared: {len(both) + int((res['better'] == 'tie').sum())}"
          + (f", not paired (parameters differ): {int(res['better'].str.startswith('not paired').sum())}"
             if not args.allow_param_mismatch and res["params_differ"].any() else "")
          + " (Welch, Benjamini-Hochberg corrected, FDR 5%)")
    if args.csv:
        from privbench.bench.store import atomic_write_text

        atomic_write_text(args.csv, res.to_csv(index=False))
    if worse and args.fail_on == "worse":
        print(f"FAILED: B is worse than A beyond noise on {worse} point(s) (--fail-on none to exit 0)",
              file=sys.stderr)
        return EXIT_COMPARE_WORSE
    return 0
