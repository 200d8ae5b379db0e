"""The bench's fresh classifier: a seeded MLP trained from scratch on releases, early-stopped on
held-out rows (the labelled-data evaluators, the two-user protocol, the log-loss upper bound).

Classifier (:data:`CLASSIFIER`): the columns that vary on the fitting rows (standard
deviation above :data:`VARIES`, 1e-6; the others are no input: the network could learn nothing
from them, and their values on other rows only met untrained weights), standardised with the
fitting rows' mean and standard deviation, each column's deviation floored at ``sd_floor`` (0.1)
times the median deviation of the varying columns; one hidden layer of 128 ReLU units
and one softmax head per label; Adam (lr 1e-3), mini-batches of 128; 15% of the
training releases held back for early stopping (best summed validation
cross-entropy, patience 10 epochs, at most 200 epochs); float32, seeded init and
batch order, one torch thread.

Why the floor and the patience (2026-11-26).  The floor: an image release whose
border pixels barely vary on the fitting rows (deviation 1e-5, say) had those
pixels multiplied by 1e5, so that any other noise there on the validation rows
threw the classifier's validation loss to 3.4 nats at the first epoch; on a
near-lossless ``ppan-image`` release (budget 0.07) three classifier seeds read 0.82,
0.91 and 0.91 accuracy, with the floor 0.914-0.921.  The patience: with 3 epochs
and at most 40 the classifier stopped on a plateau or while still improving, and on
a release that hides the digit behind a plateau (``ppan-image``, budget 0.26) it
read 0.22 where the same release trained on reaches 0.73-0.78 (three seeds; 0.81 at
patience 20), and on S = [sin(3 z_1) > 0] with 10% label noise (Bayes accuracy 0.9)
it stopped at 0.75 (40 epochs) where 200 epochs reach 0.85
(``tests/bench/test_fresh_classifier.py``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

CLASSIFIER = {"hidden": 128, "batch_size": 128, "lr": 1e-3, "max_epochs": 200, "patience": 10,
              "val_fraction": 0.15, "sd_floor": 0.1}
#: A column whose standard deviation on the fitting rows is at most this does not vary: it is no input.
VARIES = 1e-6


def column_scale(sd: np.ndarray, floor: float) -> np.ndarray:
    """Each column's divisor: its deviation, at least ``floor`` times the median deviation of the
    columns that vary (> 1e-6); a column that does not vary is divided by 1."""
    varies = sd > VARIES
    least = floor * float(np.median(sd[varies])) if varies.any() else 0.0
    return np.where(varies, np.maximum(sd, least), 1.0)


class FreshClassifier:
    """A seeded one-hidden-layer MLP with one softmax head per label (see :data:`CLASSIFIER`).

    Parameters
    ----------
    n_classes : dict of str -> int
        The labels to predict and their alphabet sizes.
    seed : int
        Seeds the initialisation, the validation split and the batch order.
    """

    def __init__(self, n_classes: dict[str, int], seed: int, **config: Any) -> None:
        self.n_classes = dict(n_classes)
        self.seed = int(seed)
        self.config = {**CLASSIFIER, **config}

    def fit(self, x: np.ndarray, labels: dict[str, np.ndarray], groups: np.ndarray | None = None
            ) -> "FreshClassifier":
        """Train on features ``x`` (n, d) and int labels (n,) per head.

        ``groups`` (n,), where given, ties rows together (several releases of one input): the
        validation rows are whole groups, so that early stopping never scores a release whose
        input the classifier has seen.
        """
        import torch
        from torch import nn

        from privbench.learners.nn import generator, init_module, torch_threads

        cfg = self.config
        x = np.asarray(x, dtype=float).reshape(len(x), -1)
        n = len(x)
        rng = np.random.default_rng(self.seed)
        if groups is None:
            perm = rng.permutation(n)
            n_val = max(1, int(round(cfg["val_fraction"] * n)))
            val, fit = perm[:n_val], perm[n_val:]
        else:
            ids = np.unique(groups)
            held = rng.permutation(ids)[: max(1, int(round(cfg["val_fraction"] * ids.size)))]
            is_val = np.isin(groups, held)
            val, fit = np.flatnonzero(is_val), rng.permutation(np.flatnonzero(~is_val))
        mu, sd = x[fit].mean(axis=0), x[fit].std(axis=0)
        self.columns_ = np.flatnonzero(sd > VARIES) if not (sd > VARIES).all() else slice(None)
        self.mean_, self.scale_ = mu[self.columns_], column_scale(sd, float(cfg["sd_floor"]))[self.columns_]
        names = list(self.n_classes)
        with torch_threads(1):
            g = generator(self.seed)
            with warnings.catch_warnings():  # no varying column (a constant release): a layer of no weights
                warnings.filterwarnings("ignore", "Initializing zero-element tensors", UserWarning)
                trunk = nn.Sequential(nn.Linear(len(self.mean_), cfg["hidden"]), nn.ReLU())
            heads = nn.ModuleDict({k: nn.Linear(cfg["hidden"], self.n_classes[k]) for k in names})
            net = init_module(nn.ModuleDict({"trunk": trunk, "heads": heads}), g)
            X = torch.as_tensor(self._features(x), dtype=torch.float32)
            Y = {k: torch.as_tensor(np.asarray(labels[k], dtype=np.int64)) for k in names}
            opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
            fit_t, val_t = torch.as_tensor(fit), torch.as_tensor(val)

            def loss(idx: Any) -> Any:
                h = net["trunk"](X[idx])
                return sum(nn.functional.cross_entropy(net["heads"][k](h), Y[k][idx]) for k in names)

            best, best_state, since, epochs = math.inf, None, 0, 0
            for epoch in range(cfg["max_epochs"]):
                order = fit_t[torch.randperm(len(fit_t), generator=g)]
                for a in range(0, len(order), cfg["batch_size"]):
                    opt.zero_grad()
                    loss(order[a:a + cfg["batch_size"]]).backward()
                    opt.step()
                epochs = epoch + 1
                with torch.no_grad():
                    v = float(loss(val_t))
                if v < best - 1e-4:
                    best, since = v, 0
                    best_state = {k: t.detach().clone() for k, t in net.state_dict().items()}
                else:
                    since += 1
                    if since >= cfg["patience"]:
                        break
            if best_state is not None:
                net.load_state_dict(best_state)
        self.net_, self.epochs_, self.val_loss_, self.val_rows_ = net, epochs, best, val
        return self

    def _features(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=float).reshape(len(x), -1)[:, self.columns_] - self.mean_) / self.scale_

    def log_proba(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """log Q(label | x) per head, each of shape (n, n_classes)."""
        import torch

        from privbench.learners.nn import torch_threads

        with torch_threads(1), torch.no_grad():
            h = self.net_["trunk"](torch.as_tensor(self._features(x), dtype=torch.float32))
            return {k: torch.log_softmax(self.net_["heads"][k](h), dim=1).double().numpy()
                    for k in self.n_classes}
