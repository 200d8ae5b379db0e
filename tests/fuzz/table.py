"""Print the fuzz suite's table from a PRIVBENCH_FUZZ_LOG file (see harness.py and the README).

Usage: python tests/fuzz/table.py FUZZ.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main(path: str) -> None:
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for line in open(path, encoding="utf-8"):
        o = json.loads(line)
        r = rows[o["category"]]
        r["cases"] += 1
        r["clean"] += bool(o["clean"])
        r["tracebacks"] += bool(o["traceback"])
        r["wrong exit"] += any(p.startswith(("exit", "accepted")) for p in o["problems"])
        r["lost"] += bool(o.get("lost"))
        r["hangs"] += bool(o["hang"])
        r["other"] += bool(o["problems"]) and not (o["traceback"] or o["hang"] or o.get("lost") or any(
            p.startswith(("exit", "accepted")) for p in o["problems"]))
    cols = ["cases", "clean", "tracebacks", "wrong exit", "lost", "hangs", "other"]
    print("| category | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    total: dict[str, int] = defaultdict(int)
    for cat in sorted(rows):
        print(f"| {cat} | " + " | ".join(str(rows[cat][c]) for c in cols) + " |")
        for c in cols:
            total[c] += rows[cat][c]
    print("| **total** | " + " | ".join(str(total[c]) for c in cols) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
