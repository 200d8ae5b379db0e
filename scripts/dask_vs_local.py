"""Time a suite on the local backend and on a two-worker loopback Dask cluster, back to back, in one run.

Usage: python scripts/dask_vs_local.py [--suite quick] [--jobs 2] [--order local,dask] [--out DIR]

Runs the suite (with its own timeout) with ``--backend local --jobs N``, then on a
``LocalCluster(n_workers=N, threads_per_worker=1, processes=True)`` on 127.0.0.1 started beforehand
(``--backend dask --scheduler ADDR``: what a user with a cluster does), each into a fresh results
directory.  Prints both wall times (``run_cases``, start to end), the cluster's start-up, the ratios
dask / local with and without it, the load average, and whether the two runs stored the same records
(every column but timings, host, run and file names; a learner's own timings inside
``mechanism_info`` dropped).  Exit status 1 when the records differ.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

#: What may differ between two runs of the same cases: timing, where, when, which run.
VOLATILE = {"started_at", "finished_at", "wall_time_s", "train_time_s", "eval_time_s", "host", "run_id",
            "mechanism_file"}


def untimed(info: object) -> object:
    """A ``mechanism_info`` JSON text without its keys that hold timings (seconds, ..._time_s), at any depth."""
    def drop(x: object) -> object:
        if isinstance(x, dict):
            return {k: drop(v) for k, v in x.items() if not ("seconds" in k or "time" in k)}
        return [drop(v) for v in x] if isinstance(x, list) else x
    return json.dumps(drop(json.loads(info)), sort_keys=True) if isinstance(info, str) else info


def differing_columns(a_dir: Path, b_dir: Path) -> list[str]:
    """Columns whose values differ between the records of two results directories (volatile ones aside)."""
    from privbench.bench.store import read_records

    a, b = (read_records(d).sort_values("case_id").reset_index(drop=True) for d in (a_dir, b_dir))
    if len(a) != len(b) or list(a["case_id"]) != list(b["case_id"]):
        return ["case_id"]
    for df in (a, b):
        df["mechanism_info"] = df["mechanism_info"].map(untimed)
    return [c for c in a.columns if c not in VOLATILE and not a[c].equals(b[c])]


def run_local(suite, out: Path, jobs: int) -> dict:
    from privbench.bench.run import run_cases

    t0 = time.perf_counter()
    s = run_cases(suite.cases, out, suite=suite.name, jobs=jobs, device="cpu", timeout=suite.timeout,
                  progress="none")
    return {"wall_s": time.perf_counter() - t0, "counts": s.counts}


def run_dask(suite, out: Path, jobs: int) -> dict:
    from distributed import LocalCluster

    from privbench.bench.run import run_cases

    t0 = time.perf_counter()
    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        started = time.perf_counter() - t0
        t1 = time.perf_counter()
        s = run_cases(suite.cases, out, suite=suite.name, jobs=jobs, device="cpu", timeout=suite.timeout,
                      backend="dask", scheduler=cluster.scheduler_address, progress="none")
        wall = time.perf_counter() - t1
    return {"wall_s": wall, "cluster_start_s": started, "counts": s.counts}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--suite", default="quick", help="suite name or YAML file (default quick)")
    ap.add_argument("--jobs", type=int, default=2, help="local workers / Dask workers (default 2)")
    ap.add_argument("--order", default="local,dask", choices=("local,dask", "dask,local"),
                    help="which backend runs first (default local,dask)")
    ap.add_argument("--out", help="where the two results directories go (default: a temporary directory)")
    args = ap.parse_args()
    from privbench.bench.suites import load_suite

    suite = load_suite(args.suite)
    root = Path(args.out or tempfile.mkdtemp(prefix="privbench-dask-vs-local-"))
    runners = {"local": run_local, "dask": run_dask}
    res = {"suite": suite.name, "cases": len(suite.cases), "jobs": args.jobs, "timeout_s": suite.timeout,
           "cpus": len(os.sched_getaffinity(0)), "load_before": os.getloadavg()}
    for name in args.order.split(","):
        res[name] = runners[name](suite, root / name, args.jobs)
        print(f"{name}: {json.dumps(res[name])}", file=sys.stderr, flush=True)
    res["load_after"] = os.getloadavg()
    res["ratio"] = res["dask"]["wall_s"] / res["local"]["wall_s"]
    res["ratio_with_cluster_start"] = (res["dask"]["wall_s"] + res["dask"]["cluster_start_s"]) / res["local"]["wall_s"]
    res["differing_columns"] = differing_columns(root / "local", root / "dask")
    print(json.dumps(res))
    print(f"{suite.name} ({len(suite.cases)} cases, --jobs {args.jobs}): local {res['local']['wall_s']:.1f} s, "
          f"dask {res['dask']['wall_s']:.1f} s (+{res['dask']['cluster_start_s']:.1f} s cluster start-up), "
          f"ratio {res['ratio']:.2f} ({res['ratio_with_cluster_start']:.2f} with start-up); records "
          + ("identical" if not res["differing_columns"] else f"DIFFER in {res['differing_columns']}")
          + f"; load average {res['load_before'][0]:.1f} -> {res['load_after'][0]:.1f}; results in {root}")
    return 1 if res["differing_columns"] else 0


if __name__ == "__main__":
    sys.exit(main())
