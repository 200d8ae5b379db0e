"""The committed table of certified sandwiches: ``python -m privbench.theory.mixture.table OUT.csv``.

Rows: the four GAP Table datasets (GAP Tables 2-5; the paper suite's
``gap-tables``; the fourth is also ``mismatch/binary-gmm``), budgets D = 1..9,
privacy map and mi, observation full then useful, with both ends, the width,
whether it met the target, the seconds spent and, for map, the family bound
beside it (``general`` for full, ``additive`` for useful).  Rows already in OUT
are kept and skipped (the run resumes); each row is appended when done.

``--jobs N`` solves N rows at once (one process each; rows are appended as they
finish, so their order in OUT is the order of finishing).  ``--wider-than W``
solves only the rows whose committed row (:mod:`.stored`) is wider than W,
``--max-rows N`` at most N of the rows left, and
``--merge-into TABLE`` then merges OUT's rows into TABLE, each end of a row the
better of old and new (each end is valid on its own), after checking that each new
band overlaps the old one (bands of the same optimum that miss each other mean a bug).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import BinaryGMM

from .bounds import mixture_optimum
from .certified import LEVELS, TOL, certified_sandwich
from .stored import row_key, stored_rows

__all__ = ["COLUMNS", "DATASETS", "TABLE_LEVELS", "TABLE_RADIUS", "main", "merge_rows", "table_row"]

DATASETS = (
    {"prior": 0.5, "mu": 3.0, "sigma0": 1.0, "sigma1": 1.0},
    {"prior": 0.75, "mu": 3.0, "sigma0": 1.0, "sigma1": 1.0},
    {"prior": 0.5, "mu": 3.0, "sigma0": 2.0, "sigma1": 1.0},
    {"prior": 0.75, "mu": 3.0, "sigma0": 2.0, "sigma1": 1.0},
)
BUDGETS = tuple(float(d) for d in range(1, 10))
COLUMNS = ("scenario_id", "observation", "privacy", "budget", "lower", "upper", "width", "converged",
           "level", "seconds", "upper_distortion", "far_mass", "family", "family_value", "machine",
           "lower_program", "errors")
FAMILY = {"full": "general", "useful": "additive"}
#: The table's refinement schedule per observation.  ``useful`` also refines the achievable end at the last
#: level: its piecewise-constant mechanism converges more slowly (prior 0.5, sd 1, mi, D = 3: 0.233706,
#: 0.233116, 0.232959 at steps 0.2, 0.1, 0.05, where the lower end reaches 0.231944 at bins 0.05).  Until the
#: relaxation's second-order coupling (:mod:`.taylor`, 2026-11-27) the useful levels also halved the
#: relaxation's cells from the second level on, since the classes' ratio inside a cell was where its slack lay
#: (prior 0.5, sigma0 2, mi, D = 9: 0.003661 at cells 0.4 / bins 0.2, 0.004408 at cells 0.2 / bins 0.2).  With
#: the coupling that slack is of second order in the cell width and cells 0.4 with finer bins gain more for
#: far less work: prior 0.5, sigma0 2, mi, D = 1: 0.376939 at cells 0.2 / bins 0.2 (247 s), 0.378187 at
#: cells 0.4 / bins 0.1 (54 s), against an achievable 0.380063 on steps 0.05
#: (``scripts/mixture_width_profile.py``).
TABLE_LEVELS = {"full": LEVELS, "useful": (LEVELS[0], LEVELS[1], (0.05, 0.05, 0.4, 0.05))}
#: The least radius of kept pairs per observation (units of the smallest sd; :func:`~.certified.pair_radius`
#: gives 8 at these budgets).  The relaxation lets mass moved further land anywhere, and the useful rows with
#: the most far mass were the ones that did not converge (prior 0.5, sigma0 2, mi, D = 4: far mass 2.1e-3, lower
#: end 0.143771 at cells 0.4 / bins 0.1 with radius 8, 0.144821 with radius 12, 97 s, against an achievable
#: 0.145821).
TABLE_RADIUS = {"full": 0.0, "useful": 12.0}


def table_row(params: dict[str, float], observation: str, privacy: str, budget: float,
              time_limit: float, growth: float | None = None) -> dict[str, Any]:
    """One row of the table (see the module notes; ``growth`` as in :func:`~.certified.certified_sandwich`)."""
    sc = BinaryGMM(**params)
    got = certified_sandwich(sc, budget, privacy, observation, time_limit=time_limit,
                             levels=TABLE_LEVELS[observation], growth=growth, min_radius=TABLE_RADIUS[observation])
    fam = mixture_optimum(sc, budget, FAMILY[observation]).value if privacy == "map" else ""
    return {"scenario_id": sc.id, "observation": observation, "privacy": privacy, "budget": budget,
            "lower": f"{got['lower']:.9f}", "upper": f"{got['upper']:.9f}", "width": f"{got['width']:.3e}",
            "converged": got["converged"], "level": got["level"], "seconds": f"{got['seconds']:.1f}",
            "upper_distortion": f"{got['upper_distortion']:.9f}", "far_mass": f"{got['far_mass']:.2e}",
            "family": FAMILY[observation] if privacy == "map" else "",
            "family_value": f"{fam:.9f}" if fam != "" else "",
            "machine": f"{platform.machine()} {os.cpu_count()} cpu", "lower_program": got["lower_program"],
            "errors": "; ".join(got["errors"])}


def _read(path: str) -> list[dict[str, str]]:
    if not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _wanted(args: argparse.Namespace, done: set[tuple[str, str, str, float]]) -> list[tuple[Any, ...]]:
    """The rows to solve, in table order: (params, observation, privacy, budget)."""
    old = stored_rows()
    todo = []
    for observation in args.observation or ("full", "useful"):
        for privacy in args.privacy or ("map", "mi"):
            for index, params in enumerate(DATASETS):
                if args.dataset and index not in args.dataset:
                    continue
                scenario_id = BinaryGMM(**params).id
                for budget in BUDGETS:
                    key = (scenario_id, observation, privacy, budget)
                    if key in done:
                        continue
                    if args.wider_than is not None and (key not in old or float(old[key]["width"]) <= args.wider_than):
                        continue
                    todo.append((params, observation, privacy, budget))
    return todo


def merge_rows(new_path: str, table_path: str) -> int:
    """Merge the rows of ``new_path`` into ``table_path``; returns the number of rows changed.

    Each end of a row is valid on its own, so a merged row keeps the larger lower end (with its
    ``lower_program`` and ``far_mass``) and the smaller achievable end (with its ``upper_distortion``),
    old or new, with the width recomputed and the new run's level, seconds and machine.  Raises
    InputError naming the first row whose old and new bands miss each other (a bug in one of them);
    the table is then left as it was."""
    if not os.path.isfile(table_path):
        raise InputError(f"table {table_path!r} does not exist (allowed: an existing table to merge into)")
    new = {row_key(r): r for r in _read(new_path)}
    rows = _read(table_path)
    merged, changed = [], 0
    for r in rows:
        n = new.get(row_key(r))
        if n is None:
            merged.append(r)
            continue
        if float(n["lower"]) > float(r["upper"]) + 1e-9 or float(r["lower"]) > float(n["upper"]) + 1e-9:
            raise InputError(f"row {row_key(r)}: new band [{n['lower']}, {n['upper']}] misses the old one "
                             f"[{r['lower']}, {r['upper']}]")
        low = n if float(n["lower"]) >= float(r["lower"]) else r
        up = n if float(n["upper"]) <= float(r["upper"]) else r
        width = float(up["upper"]) - float(low["lower"])
        row = {**n, "lower": low["lower"], "lower_program": low["lower_program"], "far_mass": low["far_mass"],
               "upper": up["upper"], "upper_distortion": up["upper_distortion"], "width": f"{width:.3e}",
               "converged": str(width <= TOL)}
        changed += (row["lower"], row["upper"]) != (r["lower"], r["upper"])
        merged.append(row)
    tmp = table_path + ".tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: r.get(c, "") for c in COLUMNS} for r in merged)
    os.replace(tmp, table_path)
    return changed


def main(argv: list[str] | None = None) -> int:
    """Compute (or resume) the table into ``out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--observation", action="append", choices=("full", "useful"), default=None)
    ap.add_argument("--privacy", action="append", choices=("map", "mi"), default=None)
    ap.add_argument("--dataset", action="append", type=int, choices=range(len(DATASETS)), default=None,
                    help="index into DATASETS (repeatable; default all)")
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds after which no finer level starts")
    ap.add_argument("--growth", type=float, default=None,
                    help="start no level predicted (this times the last one's seconds) to end past the time limit")
    ap.add_argument("--jobs", type=int, default=1, help="rows solved at once (processes)")
    ap.add_argument("--wider-than", type=float, default=None, help="only rows whose committed width is larger")
    ap.add_argument("--max-rows", type=int, default=None, help="solve at most this many rows in this run")
    ap.add_argument("--merge-into", default=None, help="then merge OUT's rows into this table (each end the better one)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs={args.jobs} must be >= 1")
    if args.max_rows is not None and args.max_rows < 0:
        ap.error(f"--max-rows={args.max_rows} must be >= 0")
    if args.merge_into and not os.path.isfile(args.merge_into):
        ap.error(f"--merge-into={args.merge_into!r} does not exist (allowed: an existing table)")
    todo = _wanted(args, {row_key(r) for r in _read(args.out)})[:args.max_rows]
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        if new:
            writer.writeheader()

        def emit(row: dict[str, Any]) -> None:
            writer.writerow(row)
            fh.flush()
            print(",".join(str(row[c]) for c in COLUMNS[:10]), flush=True)

        if args.jobs == 1:
            for task in todo:
                emit(table_row(*task, args.time_limit, args.growth))
        else:
            with ProcessPoolExecutor(args.jobs) as pool:
                for fut in as_completed([pool.submit(table_row, *task, args.time_limit, args.growth) for task in todo]):
                    emit(fut.result())
    if args.merge_into:
        try:
            print(f"{merge_rows(args.out, args.merge_into)} rows of {args.merge_into} narrowed")
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
