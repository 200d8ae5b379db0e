"""Evaluators for scenarios with no known optimum (``privbench.datasets.labelled``).

There is no true model to compute leakage from, so every number comes from a
*fresh classifier*: an MLP trained from scratch on releases of the TRAIN
partition (every train row, released again with fresh mechanism noise; a
randomised mechanism's rows RELEASES_PER_ROW = 4 times, each time with fresh noise,
see :func:`fitting_releases`) and scored on releases of HELD-OUT rows.
Why four (2026-11-26): trained on one release per row, the classifier learns that
draw's noise.  On saved paper-suite mechanisms, one release per row against four read
S accuracy 0.716 / 0.787 and 0.710 / 0.788 (``ppan-image`` at budgets 0.26 and 0.28),
0.831 / 0.905 (``gaussian-noise`` on ge5-parity), 0.652 / 0.679 (``chi2-sanitizer``'s
distortion-budget variant at MSE 80); a deterministic mechanism (two releases agree) is
released once.  For ``hypothesis-testing`` both sets are
fresh draws from the model (``n_eval`` rows each).  For the scenarios with a
fixed partition (``fixed_rows``: the image sets, the UCI tables) the
held-out partition caps ``n_eval`` (359 rows for ``digits``, 1,000 for
``mnist-subset``, 15,060 for ``adult``, 835 for ``abalone``; fewer rows are a
random subset, kept in partition order for images).  For the UCI tables
``n_eval`` caps the classifiers' training rows too (a random subset; adult's
train partition has 30,162 rows).  The image classifiers train on the whole
train partition unless ``n_eval`` is below the held-out partition (a case that
asks for a subsample, as ``--smoke`` does): then ``n_eval`` caps them too.

Evaluations returned (all ``evaluator="fresh-classifier"``):

=============  ===========  =====================================================
metric         kind         value
=============  ===========  =====================================================
``map``        lower-bound  held-out accuracy of the classifier for S; stderr
                            sqrt(p (1 - p) / n).  ``detail["preview"]`` (images):
                            8 held-out rows evenly spaced over the partition
                            (which is in digit order) (``dataset_rows`` index the
                            whole image set, ``heldout_rows`` the partition) and
                            their releases rounded to 2 decimals (``images``, one
                            flat list per image, ``shape`` to reshape them).
``mi``         lower-bound  H(S) + mean log Q(S|Z) in nats, as the held-out mean
                            of log Q(S|Z) - log p(S) with p the true label
                            frequencies of the held-out partition (the exact
                            marginal for hypothesis-testing); stderr std / sqrt(n).
``utility``    lower-bound  held-out accuracy of a classifier for the scenario's
                            primary utility label (``detail["label"]``: circle for
                            labeling digit, parity for ge5-parity, u for
                            hypothesis-testing).  ``detail["accuracy"][X]`` is the
                            accuracy for EVERY derived label X (images: digit,
                            circle, ge5, parity; hypothesis-testing: s, u), with
                            ``detail["accuracy_stderr"][X]``, ``detail["majority"][X]``
                            (the largest class frequency in the test rows: what a
                            release carrying no information about X gets).
``distortion`` estimate     sample distortion on the held-out rows: per-pixel
                            cross-entropy (mean over pixels; ``xent``) or the
                            squared error summed over the dimensions (``mse``).
``distortion`` upper-bound  ``logloss`` tasks (images): ``fresh-logloss``, the
                            held-out cross-entropy of a fresh classifier of the
                            utility label (:mod:`.heldout_logloss`), >= H(U | Z).
=============  ===========  =====================================================

The distortion evaluator is chosen by the task's declared distortion
(:data:`DISTORTION_EVALUATORS`).

:func:`utility_accuracy` reads "utility accuracy of label X" back from a list of
evaluations (or from a store row's ``evaluations`` JSON).

Classifier (:data:`CLASSIFIER`, :mod:`.classifier`): inputs (the columns that vary on the
fitting rows) standardised with the fitting rows' mean and standard deviation (floored at 0.1 times the median column's);
one hidden layer of 128 ReLU units and one softmax head per label; Adam (lr 1e-3),
mini-batches of 128; 15% of the training rows (all releases of each) held back for early stopping
(best summed validation cross-entropy, patience 10 epochs, at most 200 epochs);
float32, seeded init and batch order, one torch thread; two such networks, on the
standardised and on the whitened inputs, each label read from the one with the lower
validation loss (``detail["input"]``; the utility's ``detail["inputs"]`` per label).  The
privacy classifier (S only) and the utility classifier (every label, one shared
hidden layer) are trained separately, and BOTH read S: the privacy classifier's ``map`` and
``mi`` (``fresh-classifier``) and the utility classifier's (``fresh-classifier-shared``,
:data:`SHARED_EVALUATOR`; after the ``utility`` evaluation).  The headline
(:func:`.headline.headline`) is the larger read, as for every lower bound: on one ``ppan-image``
member (budget 0.28, seed 2 of the paper suite's run at d1251a3) the privacy classifier kept its
standardised network (0.812) while the utility classifier's whitened one read the digit at 0.882.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import xlogy

from privbench.datasets.errors import InputError

from privbench.datasets.vocabulary import LABELLED_PRIVACIES

from .classifier import CLASSIFIER, FreshClassifier
from .heldout_logloss import heldout_logloss
from .evaluation import Evaluation, check_counts, check_release, make_evaluation, mechanism_task

PREVIEW_ROWS = 8
PROBE_ROWS = 64  # rows released again to tell a randomised mechanism from a deterministic one
RELEASES_PER_ROW = 4  # releases of each training row a randomised mechanism's classifiers train on
EVALUATOR = "fresh-classifier"
SHARED_EVALUATOR = "fresh-classifier-shared"  # S read by the utility classifier


def _sorted(draw: Any) -> Any:
    """A draw's rows in partition order (images), so the preview is the partition's first rows."""
    if draw.rows is None:
        return draw
    from privbench.datasets.labelled import Draw

    o = np.argsort(draw.rows, kind="stable")
    return Draw(draw.samples.take(o),
                {k: v[o] for k, v in draw.labels.items()},
                draw.n_classes, draw.rows[o])


def row_distortion(task: Any, u: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per-row distortion, shape (n,): per-pixel cross-entropy (``xent``, mean over pixels;
    0 log 0 = 0, NaN for a release outside [0, 1]) or squared error summed over dims (``mse``)."""
    u = np.asarray(u, dtype=float).reshape(len(u), -1)
    z = np.asarray(z, dtype=float).reshape(len(z), -1)
    if task.distortion == "xent":
        with np.errstate(divide="ignore", invalid="ignore"):
            return -(xlogy(u, z) + xlogy(1.0 - u, 1.0 - z)).mean(axis=1)
    return ((u - z) ** 2).sum(axis=1)


def evaluate_labelled(mech: Any, sc: Any, task: Any, n_eval: int, seed: int) -> list[Any]:
    """Fresh-classifier evaluations of ``mech`` on a labelled scenario (see the module docstring).

    Parameters
    ----------
    mech : Mechanism
        Already checked against ``task``.
    sc : LabelledScenario
    task : Task
        The scenario's task with the mechanism's observation.
    n_eval : int
        Held-out rows (capped by the held-out partition for images); for
        hypothesis-testing also the number of fresh training rows.
    seed : int
        Seeds the draws, the releases (fresh noise) and the classifiers.
    """

    ss = np.random.SeedSequence(seed)
    r_draw, r_rel, = (np.random.default_rng(s) for s in ss.spawn(2))
    c_priv, c_util = (int(x) for x in ss.generate_state(2))
    images = sc.kind == "image"
    if sc.fixed_rows:
        n_part, n_held = sc.part_size("train"), sc.part_size("held-out")
        # n_eval caps the classifiers' training rows: always for tables, for images only where it caps the held-out
        cap = n_eval < n_part and (not images or n_eval < n_held)
        train = sc.draw("train", int(n_eval) if cap else None, r_draw)
        test = _sorted(sc.draw("held-out", None if n_eval >= n_held else int(n_eval), r_draw))
    else:
        train = sc.draw("train", int(n_eval), r_draw)
        test = sc.draw("held-out", int(n_eval), r_draw)
    w_tr, w_te = (np.array(task.observe(d.samples), copy=True) for d in (train, test))  # copies: W is not U
    z_tr = check_release(task, mech.release(w_tr, r_rel), len(train.samples))
    z_te = check_release(task, mech.release(w_te, r_rel), len(test.samples))
    n_tr, n_te = len(z_tr), len(z_te)
    sizes = {"n_train": n_tr, "n_test": n_te}

    s_name = sc.s_label
    x_fit, groups = fitting_releases(mech, task, w_tr, z_tr, [int(seed), 4])
    reps = len(x_fit) // n_tr
    att = FreshClassifier({s_name: train.n_classes[s_name]}, c_priv).fit(
        x_fit, {s_name: np.tile(train.labels[s_name], reps)}, groups)
    s_te = test.labels[s_name]
    prior = np.asarray(sc.label_prior(s_name, "held-out"), dtype=float)
    fit_info = {"epochs": att.epochs_, "input": att.input_[s_name], **CLASSIFIER}
    detail_map: dict[str, Any] = {**sizes, **fit_info, "label": s_name,
                                  "majority": float(np.bincount(s_te).max() / n_te),
                                  "note": "held-out accuracy of an MLP trained from scratch on releases of "
                                          "the train partition; <= MAP accuracy up to estimation error"}
    if images:
        k = min(PREVIEW_ROWS, n_te)
        pick = np.unique(np.linspace(0, n_te - 1, k).round().astype(int))  # spread over the partition (digits)
        detail_map["preview"] = {"dataset_rows": test.rows[pick].tolist(),
                                 "heldout_rows": _heldout_rows(sc, test.rows[pick]),
                                 "shape": list(task.image_shape), "images": np.round(z_te[pick], 2).tolist()}
    out = s_readings(att.log_proba(z_te)[s_name], s_te, prior, EVALUATOR, detail_map,
                     {**sizes, **fit_info, "label": s_name,
                      "note": "H(S) + mean log Q(S|Z) on held-out releases, H(S) from the true label frequencies"})

    util = FreshClassifier(train.n_classes, c_util).fit(
        x_fit, {k: np.tile(v, reps) for k, v in train.labels.items()}, groups)
    lp = util.log_proba(z_te)
    accs = {k: float(np.mean(lp[k].argmax(axis=1) == test.labels[k])) for k in train.n_classes}
    out.append(make_evaluation("utility", accs[sc.utility_label], EVALUATOR, "lower-bound",
                   math.sqrt(accs[sc.utility_label] * (1 - accs[sc.utility_label]) / n_te),
                   label=sc.utility_label, accuracy=accs,
                   accuracy_stderr={k: math.sqrt(a * (1 - a) / n_te) for k, a in accs.items()},
                   majority={k: float(np.bincount(test.labels[k]).max() / n_te) for k in accs},
                   **sizes, epochs=util.epochs_, inputs=util.input_,
                   note="held-out accuracy of fresh classifiers (one shared hidden layer) for every derived label"))
    shared = {**sizes, "epochs": util.epochs_, "input": util.input_[s_name], **CLASSIFIER, "label": s_name,
              "note": f"{s_name} read by the utility classifier (one hidden layer shared by every derived label): "
                      "a second fresh attacker on the same held-out releases; the headline is the larger read"}
    out += s_readings(lp[s_name], s_te, prior, SHARED_EVALUATOR, {**shared, "majority": detail_map["majority"]}, shared)
    c_dist = int(np.random.SeedSequence([int(seed), 3]).generate_state(1)[0])
    out.append(DISTORTION_EVALUATORS[task.distortion](task, train, test, z_tr, z_te, c_dist))
    return out


def s_readings(lq: np.ndarray, s_te: np.ndarray, prior: np.ndarray, evaluator: str,
               map_detail: dict[str, Any], mi_detail: dict[str, Any]) -> list[Evaluation]:
    """The ``map`` and ``mi`` lower bounds of one classifier's held-out log-probabilities of S, ``lq``
    (n, classes): accuracy of its argmax (stderr sqrt(p (1 - p) / n)) and the mean of
    log Q(S|Z) - log p(S) with ``prior`` the held-out label frequencies (stderr std / sqrt(n));
    ``mi_detail`` gets ``h_s`` and ``mean_log_q`` before its ``note``."""
    n_te = len(s_te)
    acc = float(np.mean(lq.argmax(axis=1) == s_te))
    with np.errstate(divide="ignore"):
        diff = lq[np.arange(n_te), s_te] - np.log(prior)[s_te]
    h_s = float(-(xlogy(prior, prior)).sum())
    rest = {k: v for k, v in mi_detail.items() if k != "note"}
    return [make_evaluation("map", acc, evaluator, "lower-bound", math.sqrt(acc * (1 - acc) / n_te), **map_detail),
            make_evaluation("mi", float(diff.mean()), evaluator, "lower-bound", float(diff.std(ddof=1) / math.sqrt(n_te)),
                            **rest, h_s=h_s, mean_log_q=float(lq[np.arange(n_te), s_te].mean()),
                            note=mi_detail.get("note"))]


def fitting_releases(mech: Any, task: Any, w: np.ndarray, z: np.ndarray, entropy: list[int]
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """The classifiers' training releases and their groups: ``z`` (one release per row of ``w``) and,
    for a randomised mechanism, RELEASES_PER_ROW - 1 more releases of every row (copies of ``w``,
    drawn with their own generator, seeded by ``entropy``), grouped by row; ``(z, None)`` where a
    second release of the first PROBE_ROWS rows is identical to the first (a deterministic
    mechanism: its one release is all there is to learn from)."""
    rng = np.random.default_rng(np.random.SeedSequence(entropy))
    k = min(len(w), PROBE_ROWS)
    again = check_release(task, mech.release(np.array(w[:k], copy=True), rng), k)
    if np.array_equal(again, z[:k]):
        return z, None
    more = [check_release(task, mech.release(np.array(w, copy=True), rng), len(w))
            for _ in range(RELEASES_PER_ROW - 1)]
    return np.concatenate([z, *more]), np.tile(np.arange(len(w)), RELEASES_PER_ROW)


def sample_row_distortion(task: Any, train: Any, test: Any, z_tr: np.ndarray, z_te: np.ndarray,
                          seed: int) -> Evaluation:
    """``sample-distortion``: the mean :func:`row_distortion` of the held-out rows (xent, mse)."""
    d = row_distortion(task, test.samples.u, z_te)
    return make_evaluation("distortion", float(d.mean()), "sample-distortion", "estimate",
                           float(d.std(ddof=1) / math.sqrt(d.size)), n=int(d.size), distortion=task.distortion,
                           rows="held-out")


def logloss_upper_bound(task: Any, train: Any, test: Any, z_tr: np.ndarray, z_te: np.ndarray,
                        seed: int) -> Evaluation:
    """``fresh-logloss`` (:mod:`.heldout_logloss`): the utility label's held-out cross-entropy, >= H(U | Z)."""
    name = task.utility[0][0]  # the label the log-loss is measured on (the image task's only utility label)
    return heldout_logloss(z_tr, train.samples.utility[name], z_te, test.samples.utility[name], int(task.n_u), seed,
                           distortion=task.distortion, rows="held-out")


#: task.distortion -> the evaluator of a labelled release's distortion (by the task's declared distortion).
DISTORTION_EVALUATORS = {"xent": sample_row_distortion, "mse": sample_row_distortion, "logloss": logloss_upper_bound}


def _heldout_rows(sc: Any, dataset_rows: np.ndarray) -> list[int]:
    from privbench.datasets.labelled import image_partition

    rows_te = image_partition(sc.name, sc.labeling)[3]
    return np.searchsorted(rows_te, dataset_rows).tolist()


def utility_accuracies(evaluations: Any) -> dict[str, float]:
    """Held-out accuracy per derived label ({} without a ``utility`` evaluation).

    ``evaluations``: a list of Evaluation or dicts, or the JSON text of a store row's ``evaluations``.
    """
    import json

    evs = json.loads(evaluations) if isinstance(evaluations, str) else list(evaluations or [])
    for e in evs:
        e = e if isinstance(e, dict) else e.to_dict()
        if e["metric"] == "utility":
            return {str(k): float(v) for k, v in e["detail"]["accuracy"].items()}
    return {}


def utility_accuracy(evaluations: Any, label: str | None = None) -> float:
    """Utility accuracy of ``label`` (None: the primary utility label) from evaluations.

    Parameters
    ----------
    evaluations : list of Evaluation or dicts, or the JSON text of a store row's ``evaluations``

    Returns
    -------
    float
        NaN when there is no ``utility`` evaluation (scenarios with a known optimum).

    Raises
    ------
    InputError
        ``label`` is not among the evaluated labels.
    """
    import json

    evs = json.loads(evaluations) if isinstance(evaluations, str) else list(evaluations)
    for e in evs:
        e = e if isinstance(e, dict) else e.to_dict()
        if e["metric"] == "utility":
            acc = e["detail"]["accuracy"]
            key = label or e["detail"]["label"]
            if key not in acc:
                raise InputError(f"label={label!r} has no utility accuracy (allowed: {', '.join(acc)})")
            return float(acc[key])
    return float("nan")


def evaluate_labelled_scenario(mech: Any, sc: Any, observation: str | None, privacy: str, n_eval: Any, seed: Any,
              evaluators: str | None, distortion: str | None = None) -> list[Evaluation]:
    """Scenarios with no known optimum (``privbench.datasets.labelled``): the fresh-classifier
    evaluators of this module (map, mi, utility, distortion), after checking the arguments.
    ``distortion`` (None: the scenario's own) another one its task can be stated for (images:
    ``logloss``, scored by :func:`logloss_upper_bound`)."""
    if privacy not in LABELLED_PRIVACIES:
        raise InputError(f"privacy={privacy!r} has no evaluator for {sc.name} (allowed: "
                         f"{', '.join(LABELLED_PRIVACIES)})")
    check_counts(n_eval, seed)
    if evaluators is not None:
        raise InputError(f"evaluators={evaluators!r} is not available for {sc.name} (only the standard "
                         "fresh-classifier evaluators)")
    want = mechanism_task(mech, lambda obs: sc.task(obs, privacy, distortion), sc.id, observation, privacy)
    return evaluate_labelled(mech, sc, want, int(n_eval), int(seed))
