"""Where the certified sandwich of the binary Gaussian mixture loses its width: each end per grid.

Usage: python scripts/mixture_width_profile.py [--prior 0.5] [--sigma0 1] [--sigma1 1] [--mu 3]
       [--budget 3] [--privacy mi] [--observation full] [--grid CELL,BIN ...] [--end upper|lower|both]

Prints, per (cell step, bin step) in units of min(sigma0, sigma1): the kept pairs, the
achievable (upper) end and/or the relaxation's (lower) end, and the seconds each took. Halving
the cell or the bin step and watching which end moves says where the width lives.  Each lower
end places its bins' likelihood-ratio thresholds around the previous grid's lower solution (as the
refinement of theory.mixture.certified does; the first grid: around the prior odds).  Where Clarabel
fails on a relaxation it is solved again in the narrow ratio window (``NARROW_LIMIT``), as the
sandwich's first fallback does; each lower end gives Clarabel's status and iterations.
"""

from __future__ import annotations

import argparse
import time

from privbench.datasets import BinaryGMM
from privbench.theory.mixture.achievable import achievable
from privbench.theory.mixture.certified import pair_radius
from privbench.theory.mixture.discretize import discretize
from privbench.theory.mixture.relaxation import NARROW_LIMIT, relaxation


def _lower(disc, a: argparse.Namespace, previous):
    """The relaxation; where Clarabel fails on it, again in the narrow ratio window (the first fallback
    of ``certified``), said in ``note``."""
    try:
        return {**relaxation(disc, a.budget, a.privacy, a.observation, previous=previous), "note": ""}
    except RuntimeError as exc:
        got = relaxation(disc, a.budget, a.privacy, a.observation, previous=previous, ratio_limit=NARROW_LIMIT)
        return {**got, "note": f"; ratio window {NARROW_LIMIT:g} after {exc}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prior", type=float, default=0.5)
    ap.add_argument("--mu", type=float, default=3.0)
    ap.add_argument("--sigma0", type=float, default=1.0)
    ap.add_argument("--sigma1", type=float, default=1.0)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--privacy", choices=("map", "mi"), default="mi")
    ap.add_argument("--observation", choices=("full", "useful"), default="full")
    ap.add_argument("--grid", action="append", default=None, help="CELL,BIN steps (repeatable)")
    ap.add_argument("--end", choices=("upper", "lower", "both"), default="both")
    a = ap.parse_args()
    sc = BinaryGMM(prior=a.prior, mu=a.mu, sigma0=a.sigma0, sigma1=a.sigma1)
    unit = min(a.sigma0, a.sigma1)
    radius = pair_radius(sc, a.budget) * unit
    grids = [tuple(float(x) for x in g.split(",")) for g in (a.grid or ["0.4,0.2", "0.4,0.1", "0.2,0.1"])]
    print(f"{sc.id} {a.observation} {a.privacy} D={a.budget:g}")
    previous = None
    for cell, bin_ in grids:
        disc = discretize(sc, cell * unit, bin_ * unit, radius)
        for end, fn in (("upper", achievable), ("lower", relaxation)):
            if a.end not in (end, "both"):
                continue
            t = time.perf_counter()
            try:
                got = fn(disc, a.budget, a.privacy, a.observation) if end == "upper" else _lower(disc, a, previous)
                value = f"{got['value']:.9f}"
                if end == "lower":
                    previous = (got["bin_edges"], got["p_sz"])
                    value += f" ({got['solver']['status']}, {got['solver']['iterations']} iterations{got['note']})"
            except Exception as exc:  # noqa: BLE001 - a solver failure is a result here
                value = f"failed ({exc})"
            print(f"{end:5s} cell {cell:g} bin {bin_:g} pairs {disc.n_pairs:6d} {value} "
                  f"{time.perf_counter() - t:.1f} s", flush=True)


if __name__ == "__main__":
    main()
