"""The curve of ``ppan-image`` runs in a results directory, and sample grids of their releases.

Usage::

    python scripts/ppan_image_curve.py DIR [--grids OUTDIR] [--n 10]

Prints one line per (learner parameters, budget): the budget, the bench's sample distortion
(per-pixel cross-entropy, nats/pixel), the fresh attacker's digit accuracy (the bench's
``fresh-classifier``, held-out), the mechanism's own adversary's accuracy at the end of
training (``mechanism_info.training_adversary.accuracy``, on its training images) and the
difference own - fresh, each as a mean over the seeds found.  With ``--grids`` it also writes
one PNG per learner configuration and seed: the first held-out image of each digit (top row),
then the release of the saved mechanism at each budget (one row per budget, fresh noise).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd


def load_records(directory: str) -> pd.DataFrame:
    files = glob.glob(os.path.join(directory, "records", "*.parquet"))
    if not files:
        raise SystemExit(f"no records under {directory}/records")
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    df = df[(df["learner"] == "ppan-image") & (df["status"] == "ok")].copy()
    df["own"] = [json.loads(i)["training_adversary"]["accuracy"] for i in df["mechanism_info"]]
    df["config"] = df["learner_params"].fillna("{}").astype(str)
    return df


def curve(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["config", "budget"])
    out = g.agg(seeds=("seed", "size"), distortion=("distortion", "mean"), fresh_acc=("leakage", "mean"),
                own_acc=("own", "mean"), train_s=("train_time_s", "mean")).reset_index()
    out["own_minus_fresh"] = out["own_acc"] - out["fresh_acc"]
    return out


def grids(df: pd.DataFrame, directory: str, outdir: str, n: int) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privbench.datasets.labelled import image_partition
    from privbench.learners import load_mechanism

    _, held, _, _ = image_partition("mnist-subset", "digit")  # the scenario's held-out partition
    rows = [int(np.flatnonzero(held.s == d)[0]) for d in range(min(n, 10))]
    u = held.flat[rows]
    side = int(round(np.sqrt(u.shape[1])))
    written = []
    Path(outdir).mkdir(parents=True, exist_ok=True)
    for c, ((config, seed), part) in enumerate(df.groupby(["config", "seed"])):
        part = part.sort_values("budget")
        imgs = [u]
        labels = ["original"]
        for _, r in part.iterrows():
            mech = load_mechanism(os.path.join(directory, r["mechanism_file"]))
            imgs.append(mech.release(u, np.random.default_rng(0)))
            labels.append(f"b={r['budget']:g} d={r['distortion']:.3f} acc={r['leakage']:.2f}")
        fig, axes = plt.subplots(len(imgs), len(rows), figsize=(len(rows) * 0.9, len(imgs) * 0.95))
        for i, block in enumerate(imgs):
            for j in range(len(rows)):
                ax = axes[i, j]
                ax.imshow(block[j].reshape(side, side), cmap="gray", vmin=0, vmax=1)
                ax.set_xticks([])
                ax.set_yticks([])
            axes[i, 0].set_ylabel(labels[i], rotation=0, ha="right", va="center", fontsize=7)
        fig.suptitle(f"ppan-image {config} seed {seed}", fontsize=8)
        name = os.path.join(outdir, f"grid-{c:02d}.png")
        fig.savefig(name, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(f"{name}: {config} seed {seed}")
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--grids", default=None, help="folder for the PNG sample grids")
    ap.add_argument("--n", type=int, default=10, help="images per grid row (one per digit, at most 10)")
    a = ap.parse_args()
    df = load_records(a.directory)
    pd.set_option("display.width", 250, "display.max_colwidth", 120)
    print(curve(df).to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    if a.grids:
        for line in grids(df, a.directory, a.grids, a.n):
            print(line)


if __name__ == "__main__":
    main()
