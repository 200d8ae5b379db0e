"""The chi-square paper's privacy-preserving VAE (§V-B, Tables I-II) beside our measurements.

Our rows: one per model (the ``private-vae`` learner's privacy term, ``vfae-image``, the raw data),
budget and evaluator of the attack accuracy, mean ± 95% CI over seeds of the bench's numbers on
held-out releases:

* attack accuracy: the larger of the two fresh classifiers' accuracies for S (the headline ``map``:
  the privacy classifier's or the utility classifier's read, :func:`.labelled.evaluation_of`);
* attack loss: held-out cross-entropy for S in nats, -mean log Q(S | Z) (``detail["mean_log_q"]`` of the
  headline ``mi``: the larger of the two classifiers' MI bounds, i.e. the smaller loss);
* reconstruction MSE: the task's ``mse`` distortion (squared error summed over the pixels) divided
  by the number of pixels, the paper's per-pixel MSE;
* utility accuracy: the fresh utility classifier's accuracy for the scenario's utility label.

The paper's rows (Table I: UTKFace, Table II: CelebA) as printed (``chi2_vae_tables`` of
``paper_reference.yaml``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from ..paper_tables import ci95, pm
from ..render import Block
from .labelled import evaluation_of, evaluator_family, metric_of, preview_of
from .trust import EVALUATOR, LEAKAGE_IS, one_kind

#: private-vae's privacy term -> the paper's row name.
PRIVACY_ROWS = {"none": "VAE", "gap": "GAP", "gap-a": "GAP-A", "chi2": "chi-square"}
ACC, LOSS, MSE, UTIL = "attack acc (lower: private)", "attack loss (higher: private)", "MSE per pixel", "utility acc"


def model_name(learner: str, params: Any, budget: float) -> str:
    """The table's row name: the paper's model (VAE, GAP, GAP-A, chi-square, VFAE) and our budget."""
    base = str(learner).split(" ")[0]  # the report may have appended the variant's settings
    try:
        p = json.loads(params) if isinstance(params, str) and params else {}
    except ValueError:
        p = {}
    if base == "private-vae":
        row = PRIVACY_ROWS.get(str(p.get("privacy", "chi2")), str(p.get("privacy")))
        return row if row == "VAE" else f"{row} lambda={budget:g}"
    if base.startswith("vfae"):
        return f"VFAE beta={budget:g}"
    return {"identity": "raw data (identity)", "constant": "constant release"}.get(base, f"{base} budget={budget:g}")


def chi2_vae_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per ok row: model, budget, rep, attack accuracy and loss, per-pixel MSE, utility accuracy, evaluator, kind."""
    rows = []
    for _, r in g[g["status"] == "ok"].iterrows():
        e_map, e_mi = evaluation_of(r, "map") or {}, evaluation_of(r, "mi") or {}
        shape = (preview_of(r) or {}).get("shape")
        pixels = float(np.prod(shape)) if shape else float("nan")
        mlq = (e_mi.get("detail") or {}).get("mean_log_q")
        rows.append({"model": model_name(r["learner"], r.get("learner_params"), float(r["budget"])),
                     "budget": float(r["budget"]), "rep": r["rep"], ACC: metric_of(r, "map"),
                     LOSS: -float(mlq) if mlq is not None else float("nan"),
                     MSE: float(r["distortion"]) / pixels if r.get("distortion_name") == "mse" else float("nan"),
                     UTIL: metric_of(r, "utility"), "evaluator": evaluator_family(e_map),
                     "kind": str(e_map.get("kind", ""))})
    return pd.DataFrame(rows)


def paper_rows(table: dict[str, Any], which: str) -> list[dict[str, Any]]:
    """The printed rows of one of the paper's tables."""
    out = []
    for model, v in table.items():
        util = v.get("utility_acc")
        out.append({"model": f"paper {which}: {model}", EVALUATOR: "the paper's attack model", LEAKAGE_IS: "as printed",
                    "seeds": "", ACC: f"{v['attack_acc']:.3f}", LOSS: f"{v['attack_loss']:.3f}", MSE: f"{v['mse']:.3f}",
                    UTIL: "" if util is None else f"{util:.3f} (gender)"})
    return out


def chi2_vae_section(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """``chi2-vae-tables``: our models beside the paper's Tables I and II."""
    f = chi2_vae_frame(g)
    tables = ref.get("chi2_vae_tables") or {}
    rows = []
    if not f.empty:
        for (model, b, ev), h in f.groupby(["model", "budget", "evaluator"], sort=True):  # evaluators never averaged
            rows.append({"model": f"ours: {model}", EVALUATOR: ev, LEAKAGE_IS: one_kind(h["kind"]), "seeds": len(h),
                         **{c: pm(h[c].mean(), ci95(h[c]), ".3f") for c in (ACC, LOSS)},
                         MSE: pm(h[MSE].mean(), ci95(h[MSE]), ".4f"),
                         UTIL: pm(h[UTIL].mean(), ci95(h[UTIL]), ".3f")})
    rows += paper_rows(tables.get("table1") or {}, "Table I (UTKFace)")
    rows += paper_rows(tables.get("table2") or {}, "Table II (CelebA)")
    if not rows:
        return []
    note = ("Ours: fresh classifiers on held-out releases (the decoded images), mean ± 95% CI over seeds; S is read "
            "by two (one for S alone, one for every label) and each row takes the larger accuracy and the smaller "
            "loss; attack loss is the held-out cross-entropy for S in nats (the paper's 'Prv. Attr. Loss'); MSE is "
            "per pixel (images in [0, 1]); utility is the scenario's utility label. The paper's rows as printed "
            "(faces, ResNet VAE; its attack model is the same MLP as GAP's adversary). IRL is printed, not run.")
    majority = _majority(g)
    if math.isfinite(majority):
        note += f" Majority-class S accuracy on our held-out rows: {majority:.3f}."
    return [Block("h3", "Beside the chi-square paper's Tables I-II (privacy-preserving VAE)", toc=True),
            Block("p", note), Block("table", table=pd.DataFrame(rows))]


def _majority(g: pd.DataFrame) -> float:
    for _, r in g[g["status"] == "ok"].iterrows():
        m = ((evaluation_of(r, "map") or {}).get("detail") or {}).get("majority")
        if m is not None:
            return float(m)
    return float("nan")
