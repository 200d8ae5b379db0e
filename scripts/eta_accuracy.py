"""Measure the run's ETA against the time actually left, from a ``privbench run`` progress log.

Usage: privbench run --suite quick --out DIR 2> progress.log; python scripts/eta_accuracy.py progress.log

The log is the per-case lines ``privbench run`` writes to stderr when it is not a terminal
(``[done/total] status label  elapsed H:MM:SS ETA H:MM:SS``).  Prints, at a few points of the
run, the time truly left (last elapsed - elapsed), the cost-weighted ETA printed
(privbench.bench.eta) and the equal-cost ETA (elapsed / done x left) privbench printed before;
then the mean absolute error of each over all lines.
"""

from __future__ import annotations

import argparse
import re
import statistics

LINE = re.compile(r"^\[(\d+)/(\d+)\].*elapsed (\d+):(\d\d):(\d\d) ETA (\?|(\d+):(\d\d):(\d\d))")


def parse(path: str) -> list[tuple[int, int, int, int | None]]:
    """(done, total, elapsed s, ETA s or None) per progress line."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = LINE.match(line)
            if m:
                el = int(m[3]) * 3600 + int(m[4]) * 60 + int(m[5])
                eta = None if m[6] == "?" else int(m[7]) * 3600 + int(m[8]) * 60 + int(m[9])
                rows.append((int(m[1]), int(m[2]), el, eta))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("log", help="stderr of a 'privbench run' (not on a terminal)")
    args = ap.parse_args()
    rows = parse(args.log)
    if not rows:
        raise SystemExit(f"{args.log}: no progress lines")
    end = rows[-1][2]
    shown = {max(1, round(f * len(rows))) for f in (0.02, 0.1, 0.25, 0.5, 0.75, 0.9)}
    print(f"{'done':>9} {'elapsed':>8} {'left':>6} {'cost ETA':>9} {'equal-cost ETA':>15}")
    for done, total, el, eta in rows:
        if done in shown:
            print(f"{done:>4}/{total:<4} {el:>8} {end - el:>6} {'?' if eta is None else eta:>9} "
                  f"{el / done * (total - done):>15.0f}")
    cost = [abs(eta - (end - el)) for _, _, el, eta in rows if eta is not None]
    equal = [abs(el / d * (t - d) - (end - el)) for d, t, el, _ in rows]
    print(f"mean absolute error over {len(rows)} lines: cost-weighted {statistics.mean(cost):.1f} s, "
          f"equal-cost {statistics.mean(equal):.1f} s")


if __name__ == "__main__":
    main()
