"""The ``two-user`` protocol — the generative-filter paper's distributed setting (Chen, Navidi &
Rajagopal, §4 "Distributed training with customized preferences" and §6.7.5):

- data: the image scenario ``case.scenario`` (``mnist-subset`` or ``digits``,
  :mod:`privbench.datasets.labelled`) with ``params == {"labeling": "ge5-parity"}``,
  its fixed partition ``ImageData.split(0.2, seed=0)`` -> (train, held-out);
  ``case.n_train`` and ``case.n_eval`` are not used (the partitions are);
- the train partition is permuted (seeded by ``case.seed``) and cut into 10
  equal parts; part 1 belongs to user A, part 2 to user B, parts 3-10 are public;
- the aggregator trains the VAE once on all train rows
  (:meth:`LatentFilter.fit_autoencoder`); user A trains its filter on part 1
  with S = ``digit >= 5`` (utility: parity), user B on part 2 with S = parity
  (utility: ``digit >= 5``) (:meth:`LatentFilter.fit_filter`, all budgets of the
  case in one batched fit, observation ``full``: the filter sees its own S);
- per budget, the released training set is the 8 public parts raw plus user A's
  and user B's parts through their own filters (a randomised filter's parts released
  four times, as the labelled evaluators do: :func:`pooled_releases`); two fresh classifiers
  (:func:`train_classifier`, the bench's fresh-classifier MLP) learn
  ``digit >= 5`` and parity from it;
- the held-out partition is split in two halves (seeded by ``case.seed``): one
  released by user A's filter, one by user B's.  Reported: user A's private
  (``>= 5``) and utility (parity) accuracy on its half, user B's private
  (parity) and utility (``>= 5``) accuracy on its half, and as a reference the
  same four accuracies of classifiers trained on the raw train partition and
  scored on the raw held-out halves (no privatisation at all).

Headline numbers: ``leakage`` is the largest of the two users' private-label
accuracies (privacy metric ``map``: the case must declare ``privacy: map``);
``distortion`` the task's mean per-pixel cross-entropy (nats per pixel; the
task's distortion) between the held-out images and their releases, over both
privatized halves.  There is no optimum for real images: ``optimum_at_budget``
and ``gap`` are NaN, ``bound_kind`` is ``"none"``, ``below_bound`` False.  The
budget is the filter's latent KL budget b (not a distortion budget), so
``overshoot`` is 0.

A case that does not fit the protocol (another image set, labeling, learner or
privacy metric) is not raised at suite-building time: it becomes failed rows
whose error names the bad value and what is allowed (:func:`check_two_user`
raises the same :class:`InputError` for callers that want to check early).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

from ..evaluators import CLASSIFIER, Evaluation, row_distortion
from ..records import Record, error_text, failure_rows, headline_fields, json_default, no_bound_fields, now

TWO_USER_SETS = ("mnist-subset", "digits")
TWO_USER_LABELING = "ge5-parity"
N_PARTS = 10


def check_two_user(case: Any) -> None:
    """Raise InputError unless ``case`` fits the ``two-user`` protocol (see the module docstring)."""
    from privbench.learners import resolve_learner

    if case.scenario not in TWO_USER_SETS:
        raise InputError(f"two-user: scenario={case.scenario!r} is not supported "
                         f"(allowed: {', '.join(TWO_USER_SETS)})")
    labeling = case.params.get("labeling")
    if labeling != TWO_USER_LABELING:
        raise InputError(f"two-user: labeling={labeling!r} is not supported (allowed: {TWO_USER_LABELING})")
    cls = resolve_learner(case.learner)
    if "two-user" not in getattr(cls, "protocols", ()):
        raise InputError(f"two-user: learner={case.learner!r} is not supported (allowed: latent-filter)")
    if case.privacy != "map":
        raise InputError(f"two-user: privacy={case.privacy!r} is not supported (allowed: map, the private-label "
                         "accuracy of a fresh classifier)")
    if case.observation not in (None, "full"):
        raise InputError(f"two-user: observation={case.observation!r} is not supported (allowed: full, each "
                         "user's filter sees its own private label)")


def run_two_user(case: Any, device: str = "auto", artifacts: str | os.PathLike | None = None) -> list[Record]:
    """Run ``case`` under the ``two-user`` protocol (module docstring); one Record per budget.

    The users' fitted filters are saved under ``artifacts`` (a temporary directory when None) and
    every release is made from those files by a release server (:func:`shipped`).
    """
    started, t0 = now(), time.perf_counter()
    from privbench.datasets.scenarios import make_scenario
    from privbench.learners import make_learner
    from privbench.learners.nn import resolve_device, seeds

    dev = str(device)
    try:
        check_two_user(case)
        train, held = make_scenario(case.scenario, case.params).partition()  # the fixed split(0.2, seed=0)
        s_part, s_half, s_ae, s_fa, s_fb, s_cls, s_rel = seeds(case.seed, 7)
        parts = np.array_split(np.random.default_rng(s_part).permutation(len(train)), N_PARTS)
        halves = np.array_split(np.random.default_rng(s_half).permutation(len(held)), 2)
        x_tr, ge5_tr, par_tr = train.flat, train.s, train.utility   # labeling ge5-parity: s = ge5, utility = parity
        task = train.task("full", "map" if case.training_privacy == "map" else "mi")  # utility: parity
        learner = make_learner(case.learner, **case.learner_params)
        dev = str(resolve_device(device, learner.prefers_gpu(task)))
        budgets = list(case.budgets)
        t1 = time.perf_counter()
        a, b = parts[0], parts[1]
        mech_a, mech_b = _fit_users(learner, task, x_tr, ge5_tr, par_tr, a, b, budgets,
                                    (s_ae, s_fa, s_fb), dev)
        train_time = time.perf_counter() - t1
    except Exception as exc:  # noqa: BLE001 - recorded, the suite goes on
        return failure_rows(case, "failed", "fit: " + error_text(exc), started, time.perf_counter() - t0, dev)

    n = len(budgets)
    ha, hb = halves
    x_he, ge5_he, par_he = held.flat, held.s, held.utility
    # reference: classifiers trained on the raw train partition, scored on the raw held-out halves
    try:
        ref = _user_accuracies(x_tr, ge5_tr, par_tr, x_he[ha], x_he[hb], ge5_he, par_he, ha, hb, s_cls)
        ref_error = None
    except Exception as exc:  # noqa: BLE001
        ref, ref_error = None, error_text(exc)
    with contextlib.ExitStack() as stack:
        try:  # from here on the saved files are scored, released by a server of their own
            mech_a, mech_b, files = shipped(mech_a, mech_b, stack, artifacts)
        except Exception as exc:  # noqa: BLE001
            return failure_rows(case, "failed", "save: " + error_text(exc), started, time.perf_counter() - t0, dev)
        shared = (time.perf_counter() - t0) / n
        public = np.concatenate(parts[2:])
        rows = []
        for i, budget in enumerate(budgets):
            t2 = time.perf_counter()
            row = Record.base(case, budget)
            row.update(started_at=started, device=dev, train_time_s=train_time / n)
            try:
                if ref is None:
                    raise RuntimeError(f"raw reference classifiers: {ref_error}")
                rng = np.random.default_rng([s_rel, i])
                ma, mb = mech_a[i], mech_b[i]
                w_a, w_b = np.column_stack([ge5_tr[a], x_tr[a]]), np.column_stack([par_tr[b], x_tr[b]])
                z_a = ma.release(w_a.copy(), rng)
                z_b = mb.release(w_b.copy(), rng)
                zh_a = ma.release(np.column_stack([ge5_he[ha], x_he[ha]]), rng)
                zh_b = mb.release(np.column_stack([par_he[hb], x_he[hb]]), rng)
                x_rel, rel_idx, groups = pooled_releases(x_tr, public, ((ma, w_a, z_a, a), (mb, w_b, z_b, b)),
                                                         task, [s_rel, i])
                acc = _user_accuracies(x_rel, ge5_tr[rel_idx], par_tr[rel_idx], zh_a, zh_b, ge5_he, par_he, ha, hb,
                                       s_cls, groups)
                d_a, d_b = row_distortion(task, x_he[ha], zh_a), row_distortion(task, x_he[hb], zh_b)
                m_a, m_b = ((zh_a - x_he[ha]) ** 2).mean(1), ((zh_b - x_he[hb]) ** 2).mean(1)
                evals = _two_user_evaluations(acc, ref, np.concatenate([d_a, d_b]), d_a, d_b,
                                              np.concatenate([m_a, m_b]), ma, mb, len(a), len(b), len(public))
                row.update(_row_numbers(evals))
                if artifacts is not None:
                    row["mechanism_file"] = files[i]  # budget-<i>/: user-a.pt and user-b.pt
                row["mechanism_info"] = json.dumps({"user_a": ma.info, "user_b": mb.info}, default=json_default)
            except Exception as exc:  # noqa: BLE001
                row.update(status="failed", error="evaluate: " + error_text(exc))
            row.update(finished_at=now(), wall_time_s=shared + time.perf_counter() - t2)
            rows.append(row)
    return rows


def _fit_users(learner: Any, task: Any, x: np.ndarray, ge5: np.ndarray, par: np.ndarray, a: np.ndarray,
               b: np.ndarray, budgets: list[float], seed_list: tuple[int, int, int], dev: str) -> tuple[Any, Any]:
    """The VAE on all train rows, then user A's filter (S = >= 5, utility parity) on rows ``a`` and user
    B's (S = parity, utility >= 5) on rows ``b``; each user's task and samples declare its utility label."""
    from privbench.datasets.samples import Samples
    from privbench.datasets.tasks import Task

    s_ae, s_fa, s_fb = seed_list
    task_b = Task.from_dict({**task.to_dict(), "utility": [["ge5", 2]]})
    ae = learner.fit_autoencoder(Samples(ge5.copy(), x.copy(), {"parity": par.copy()}), task, s_ae % 2**31, dev)
    mech_a = learner.fit_filter(ae, Samples(ge5[a], x[a], {"parity": par[a]}), task, budgets, s_fa % 2**31, dev)
    mech_b = learner.fit_filter(ae, Samples(par[b], x[b], {"ge5": ge5[b]}), task_b, budgets, s_fb % 2**31, dev)
    return mech_a, mech_b


def shipped(mech_a: list[Any], mech_b: list[Any], stack: contextlib.ExitStack,
            artifacts: str | os.PathLike | None) -> tuple[list[Any], list[Any], list[str]]:
    """The two users' filters as a user would ship them: each saved (``budget-<i>/user-a.pt``, ...),
    loaded back (``weights_only``) and released by a release server (a process with no bench module,
    :class:`~privbench.bench.remote_release.ReleaseServer`) from its own copy of the file, never by
    the objects that trained.  Returns the loaded filters of user A and B and, per budget, the directory of their two files."""
    from privbench.learners import load_mechanism

    from ..artifacts import defining_modules, save_mechanisms, temporary_directory
    from ..remote_release import ReleaseServer

    where = Path(artifacts) if artifacts is not None else Path(stack.enter_context(temporary_directory()))
    server = ReleaseServer(1)
    stack.callback(server.close)
    modules = defining_modules(list(mech_a) + list(mech_b))
    loaded_a, loaded_b, dirs = [], [], []
    for i, pair in enumerate(zip(mech_a, mech_b)):
        d = where / f"budget-{i}"
        saved = save_mechanisms(list(pair), d, names=["user-a.pt", "user-b.pt"])
        bad = [p for p in saved if not isinstance(p, Path)]
        if bad:
            raise RuntimeError(str(bad[0]))
        for p, out in zip(saved, (loaded_a, loaded_b)):
            mech = load_mechanism(p)
            server.attach(mech, str(p), str(p), modules)
            out.append(mech)
        dirs.append(str(d))
    return loaded_a, loaded_b, dirs


def pooled_releases(x: np.ndarray, public: np.ndarray, users: tuple, task: Any, entropy: list[int]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The attackers' training set: the public rows raw, then each user's releases of its rows (a
    randomised filter's four releases per row, as the labelled evaluators':
    :func:`~privbench.bench.evaluators.labelled.fitting_releases`). Returns the rows, the train-partition
    index of each (its labels) and the groups (all releases of one input share one)."""
    from ..evaluators.labelled import fitting_releases

    parts, idx, groups = [x[public]], [public], [np.arange(len(public))]
    for k, (mech, w, z, rows) in enumerate(users):
        zs, g = fitting_releases(mech, task, w, z, [*entropy, k])
        start = sum(len(p) for p in parts)  # ids unique across users: offset by the rows before
        parts.append(zs)
        idx.append(np.tile(rows, len(zs) // len(rows)))
        groups.append(start + (g if g is not None else np.arange(len(rows))))
    return np.vstack(parts), np.concatenate(idx), np.concatenate(groups)


def _user_accuracies(x_train: np.ndarray, ge5_train: np.ndarray, par_train: np.ndarray, x_a: np.ndarray,
                     x_b: np.ndarray, ge5_he: np.ndarray, par_he: np.ndarray, ha: np.ndarray, hb: np.ndarray,
                     seed: int, groups: np.ndarray | None = None) -> dict[str, tuple[float, int]]:
    """Accuracies (value, n) of fresh ``>= 5`` and parity classifiers on both users' held-out halves
    (trained on ``x_train``, whose rows ``groups`` ties together: see :func:`train_classifier`)."""
    s_ge5, s_par = seeds(seed, 2)
    ge5 = train_classifier(x_train, ge5_train, 2, s_ge5 % 2**31, groups)
    par = train_classifier(x_train, par_train, 2, s_par % 2**31, groups)
    return {"a_private": (float(np.mean(ge5(x_a) == ge5_he[ha])), len(ha)),
            "a_utility": (float(np.mean(par(x_a) == par_he[ha])), len(ha)),
            "b_private": (float(np.mean(par(x_b) == par_he[hb])), len(hb)),
            "b_utility": (float(np.mean(ge5(x_b) == ge5_he[hb])), len(hb))}


def seeds(seed: int, n: int) -> list[int]:
    from privbench.learners.nn import seeds as _seeds

    return _seeds(seed, n)


_ROLES = {"a_private": ("user-a", "ge5", "private"), "a_utility": ("user-a", "parity", "utility"),
          "b_private": ("user-b", "parity", "private"), "b_utility": ("user-b", "ge5", "utility")}


def _acc_ev(metric: str, evaluator: str, key: str, value: tuple[float, int], **extra: Any) -> Evaluation:
    p, m = value
    user, label, role = _ROLES[key]
    return Evaluation(metric, p, evaluator, "estimate", math.sqrt(max(p * (1 - p), 0.0) / max(m, 1)),
                      {"user": user, "label": label, "role": role, "n_test": m, **extra})


def _two_user_evaluations(acc: dict, ref: dict, d_all: np.ndarray, d_a: np.ndarray, d_b: np.ndarray,
                          mse: np.ndarray, ma: Any, mb: Any, n_a: int, n_b: int, n_public: int) -> list[Evaluation]:
    """The protocol's evaluations: released-data accuracies (``map`` private, ``utility``), raw
    references (``raw-map``, ``raw-utility``), then distortions."""
    train = {"n_public": n_public, "n_user_a": n_a, "n_user_b": n_b, "classifier": dict(CLASSIFIER)}
    out = []
    for key in ("a_private", "b_private", "a_utility", "b_utility"):
        metric = "map" if key.endswith("private") else "utility"
        out.append(_acc_ev(metric, "two-user-attacker", key, acc[key], trained_on="released train partition",
                           **train))
    for key in ("a_private", "b_private", "a_utility", "b_utility"):
        metric = "raw-map" if key.endswith("private") else "raw-utility"
        out.append(_acc_ev(metric, "two-user-raw-reference", key, ref[key], trained_on="raw train partition",
                           scored_on="raw held-out half"))
    se = float(d_all.std(ddof=1) / math.sqrt(len(d_all))) if len(d_all) > 1 else 0.0
    out.append(Evaluation("distortion", float(d_all.mean()), "two-user-xent", "estimate", se,
                          {"unit": "nats per pixel", "n": len(d_all), "user_a": float(d_a.mean()),
                           "user_b": float(d_b.mean()),
                           "train_divergence_a": ma.info.get("train_divergence"),
                           "train_divergence_b": mb.info.get("train_divergence")}))
    out.append(Evaluation("mse", float(mse.mean()), "two-user-mse", "estimate",
                          float(mse.std(ddof=1) / math.sqrt(len(mse))) if len(mse) > 1 else 0.0,
                          {"unit": "squared error per pixel", "n": len(mse)}))
    return out


def _row_numbers(evals: list[Evaluation]) -> dict[str, Any]:
    out = headline_fields(evals, "map")
    return out if out.get("status") == "failed" else {**out, **no_bound_fields(0.0)}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def train_classifier(x: np.ndarray, y: np.ndarray, n_classes: int, seed: int, groups: np.ndarray | None = None) -> Any:
    """A fresh classifier for one label: the bench's :class:`~privbench.bench.evaluators.labelled.FreshClassifier`.

    One hidden layer of 128 ReLU units on standardised inputs, Adam, early
    stopping on 15% of the rows (:data:`privbench.bench.evaluators.labelled.CLASSIFIER`);
    seeded (never the global RNG), one torch thread.

    Parameters
    ----------
    x : ndarray, shape (n, d)
        Inputs (flattened images in [0, 1]).
    y : ndarray, shape (n,)
        Labels 0..n_classes-1.
    n_classes : int
    seed : int
    groups : ndarray, shape (n,), optional
        Rows that are releases of one input (validation holds out whole groups).

    Returns
    -------
    callable
        ``predict(x) -> ndarray of shape (m,)``, the arg-max labels.
    """
    from ..evaluators import FreshClassifier

    x = np.asarray(x, dtype=float).reshape(len(x), -1)
    y = np.asarray(y, dtype=np.int64)
    if len(x) != len(y) or len(x) < 2:
        raise InputError(f"classifier: need as many labels as rows (>= 2), got {len(x)} rows and {len(y)} labels")
    clf = FreshClassifier({"y": int(n_classes)}, int(seed)).fit(x, {"y": y}, groups)

    def predict(xq: np.ndarray) -> np.ndarray:
        return clf.log_proba(np.asarray(xq, dtype=float).reshape(len(xq), -1))["y"].argmax(1)

    return predict
