"""The committed table of certified sandwiches: ``python -m privbench.theory.mixture.table OUT.csv``.

Rows: the four GAP Table datasets (GAP Tables 2-5; the paper suite's
``gap-tables``; the fourth is also ``mismatch/binary-gmm``), budgets D = 1..9,
privacy map and mi, observation full then useful, with both ends, the width,
whether it met the target, the seconds spent and, for map, the family bound
beside it (``general`` for full, ``additive`` for useful).  Rows already in OUT
are kept and skipped (the run resumes); each row is appended when done.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
from typing import Any

from privbench.datasets.scenarios import BinaryGMM

from .bounds import mixture_optimum
from .certified import certified_sandwich

__all__ = ["COLUMNS", "DATASETS", "main", "table_row"]

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


def table_row(params: dict[str, float], observation: str, privacy: str, budget: float,
              time_limit: float) -> dict[str, Any]:
    """One row of the table (see the module notes)."""
    sc = BinaryGMM(**params)
    got = certified_sandwich(sc, budget, privacy, observation, time_limit=time_limit)
    fam = mixture_optimum(sc, budget, FAMILY[observation]).value if privacy == "map" else ""
    return {"scenario_id": sc.id, "observation": observation, "privacy": privacy, "budget": budget,
            "lower": f"{got['lower']:.9f}", "upper": f"{got['upper']:.9f}", "width": f"{got['width']:.3e}",
            "converged": got["converged"], "level": got["level"], "seconds": f"{got['seconds']:.1f}",
            "upper_distortion": f"{got['upper_distortion']:.9f}", "far_mass": f"{got['far_mass']:.2e}",
            "family": FAMILY[observation] if privacy == "map" else "",
            "family_value": f"{fam:.9f}" if fam != "" else "",
            "machine": f"{platform.machine()} {os.cpu_count()} cpu", "lower_program": got["lower_program"],
            "errors": "; ".join(got["errors"])}


def main(argv: list[str] | None = None) -> int:
    """Compute (or resume) the table into ``out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--observation", action="append", choices=("full", "useful"), default=None)
    ap.add_argument("--privacy", action="append", choices=("map", "mi"), default=None)
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds after which no finer level starts")
    args = ap.parse_args(argv)
    done = set()
    if os.path.exists(args.out):
        with open(args.out, newline="") as fh:
            done = {(r["scenario_id"], r["observation"], r["privacy"], float(r["budget"])) for r in csv.DictReader(fh)}
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        for observation in args.observation or ("full", "useful"):
            for privacy in args.privacy or ("map", "mi"):
                for params in DATASETS:
                    for budget in BUDGETS:
                        if (BinaryGMM(**params).id, observation, privacy, budget) in done:
                            continue
                        row = table_row(params, observation, privacy, budget, args.time_limit)
                        writer.writerow(row)
                        fh.flush()
                        print(",".join(str(row[c]) for c in COLUMNS[:10]), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
