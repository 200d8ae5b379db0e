"""Utility classifiers for the learners that train against the task's utility labels (``Task.utility``):
a sweep of k MLPs with one softmax head per utility label (the chi-square paper's tau, eq 25; the
generative filter's nu, eq 15).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from privbench.datasets.errors import InputError

from .core import init_module
from .sweep import SweepMLP


def utility_targets(utility: dict[str, np.ndarray] | None, classes: dict[str, int],
                    device: torch.device) -> dict[str, torch.Tensor]:
    """The checked samples' utility labels as int64 tensors (n,), one per declared label.

    Raises
    ------
    InputError
        The task declares no utility labels (nothing to train a utility classifier on).
    """
    if not classes or utility is None:
        raise InputError("this formulation trains against a utility classifier, but the task declares no "
                         "utility labels (Task.utility is empty)")
    return {k: torch.as_tensor(np.asarray(utility[k], dtype=np.int64), device=device) for k in classes}


class UtilityHeads:
    """k utility classifiers (a :class:`SweepMLP`), one softmax head per label.

    Parameters
    ----------
    k : int
        Sweep members (one per budget).
    d_in : int
        Input dimension (the release Y, or the filtered latent z~).
    classes : dict of str -> int
        Utility labels and their numbers of classes (``Task.utility_classes``).
    hidden, layers : int
        Hidden width and number of linear layers (>= 1; 1 is a linear classifier).
    activation : str
        Hidden activation (``tanh`` in the chi-square paper, ``elu`` in the filter paper).
    """

    def __init__(self, k: int, d_in: int, classes: dict[str, int], hidden: int, layers: int, activation: str,
                 gen: torch.Generator, device: torch.device) -> None:
        self.classes = dict(classes)
        sizes = [d_in] + [hidden] * (layers - 1) + [sum(self.classes.values())]
        self.net = init_module(SweepMLP(k, sizes, activation), gen).to(device)

    def parameters(self) -> list[torch.Tensor]:
        return list(self.net.parameters())

    def _heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        logits, out, a = self.net(x), {}, 0
        for name, c in self.classes.items():
            out[name] = logits[..., a:a + c]
            a += c
        return out

    def loss(self, x: torch.Tensor, labels: dict[str, torch.Tensor]) -> torch.Tensor:
        """Summed cross-entropy over the labels, batch mean per member: shape (k,).

        ``x``: (k, m, d_in); ``labels``: name -> int64 (m,).
        """
        total = x.new_zeros(x.shape[0])
        for name, logits in self._heads(x).items():
            k, m, c = logits.shape
            y = labels[name].expand(k, -1).reshape(-1)
            total = total + nn.functional.cross_entropy(logits.reshape(-1, c), y, reduction="none").view(k, m).mean(-1)
        return total

    def accuracy(self, x: torch.Tensor, labels: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
        """Per label, each member's accuracy on the batch: name -> (k,)."""
        with torch.no_grad():
            return {name: (logits.argmax(-1) == labels[name]).double().mean(-1).cpu().numpy()
                    for name, logits in self._heads(x).items()}
