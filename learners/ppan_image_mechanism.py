"""The released mechanism of ``ppan-image`` (:mod:`.ppan_image`): a randomized image-to-image network.

Saved and loaded as mechanism type ``ppan-image-mlp`` (``weights_only``): its layers, its output
(plain, skip or gated; :func:`.nn.image_game.release_parts`) and its budget calibration
(:mod:`.image_calibration`), all in float64 on the CPU whatever the device it was trained on.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task

from .base import Mechanism, check_choice, mechanism_type
from .image_calibration import A_MAX, apply_image_calibration
from .nn.core import rng_generator
from .nn.image_game import mech_input, release_parts

ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu, "elu": F.elu, "leaky_relu": F.leaky_relu}


@mechanism_type("ppan-image-mlp")
class ImageMLPMechanism(Mechanism):
    """Z = sigmoid(bound(MLP([one-hot S], U, seed noise))): a randomized image-to-image net.

    Parameters
    ----------
    weights : list of tensors, shapes (d_in, d_out) per layer
    biases : list of tensors, shapes (d_out,) per layer
    n_noise : int
        Seed noise dimension (Uniform[-1, 1]).
    activation : str
        Hidden activation, one of tanh, relu, elu, leaky_relu.
    blend : float or None
        The budget calibration (:mod:`.image_calibration`): the release is (1 - blend) Z + blend T.
    anchor : array of shape (d_u,) or None
        T of the calibration: None the image U; else this fixed image (the training images' mean),
        inside (0, 1), which adds no information about the image to the release.
    """

    def __init__(self, task: Task, budget: float, weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor],
                 n_noise: int, activation: str = "tanh", skip_clamp: float | None = None,
                 info: dict[str, Any] | None = None, gate_bias: float | None = None,
                 blend: float | None = None, anchor: Any = None) -> None:
        super().__init__(task, budget, info)
        if task.kind != "image":
            raise InputError("ppan-image-mlp mechanisms are for image tasks")
        check_choice("activation", activation, tuple(ACTIVATIONS))
        self.weights = [torch.as_tensor(w, dtype=torch.float64).detach().cpu() for w in weights]
        self.biases = [torch.as_tensor(b, dtype=torch.float64).detach().cpu().reshape(-1) for b in biases]
        self.n_noise = int(n_noise)
        self.activation = activation
        self.skip_clamp = None if skip_clamp is None else float(skip_clamp)
        self.gate_bias = None if gate_bias is None else float(gate_bias)
        self.blend = None if blend is None else float(blend)
        if self.blend is not None and not 0.0 <= self.blend <= A_MAX:
            raise InputError(f"blend={self.blend!r} must lie in [0, {A_MAX}] (the budget calibration's weight of U)")
        self.anchor = None if anchor is None else torch.as_tensor(anchor, dtype=torch.float64).detach().cpu()
        if self.anchor is not None and (self.anchor.shape != (task.d_u,) or not bool(
                torch.all((self.anchor > 0) & (self.anchor < 1)))):
            raise InputError(f"anchor must be {task.d_u} pixel values inside (0, 1) (the calibration's fixed image)")
        if self.gate_bias is not None and self.skip_clamp is None:
            raise InputError("a gated ppan-image-mlp mechanism needs skip_clamp (the clamp of its sharp path)")
        d_out = task.d_u * (1 if self.gate_bias is None else 2)  # type: ignore[operator]
        d_in = (task.n_s if task.observation == "full" else 0) + task.d_u + self.n_noise  # type: ignore[operator]
        if (len(self.weights) != len(self.biases) or not self.weights or self.weights[0].shape[0] != d_in
                or self.weights[-1].shape[1] != d_out):
            raise InputError(f"ppan-image-mlp layers do not map {d_in} inputs to {d_out} outputs")

    def _net(self, x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        act = ACTIVATIONS[self.activation]
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if i < len(self.weights) - 1:
                x = act(x)
        return release_parts(x, u, self.skip_clamp, self.gate_bias)[0]

    @torch.no_grad()
    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        """Released images, float64 of shape (n, d_u) strictly inside (0, 1)."""
        w = self.task.check_w(w)
        if self.task.observation == "full":
            col = w[:, 0]
            if np.any((col != np.round(col)) | (col < 0) | (col >= self.task.n_s)):  # type: ignore[operator]
                raise InputError(f"the S column of W must hold labels 0..{self.task.n_s - 1}")  # type: ignore[operator]
        gen = rng_generator(rng)
        noise = torch.rand(len(w), self.n_noise, generator=gen, dtype=torch.float64) * 2 - 1
        wt = torch.as_tensor(w, dtype=torch.float64)
        z = self._net(mech_input(wt, self.task, noise), wt[:, -self.task.d_u:]).numpy()
        anchor = None if self.anchor is None else self.anchor.numpy()
        return apply_image_calibration(z, w[:, -self.task.d_u:], self.blend, anchor)

    def params(self) -> dict[str, Any]:
        return {"layers": [list(w.shape) for w in self.weights], "n_noise": self.n_noise,
                "activation": self.activation, "skip_clamp": self.skip_clamp, "gate_bias": self.gate_bias,
                "blend": self.blend, "anchored": self.anchor is not None}

    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        tensors = {f"w{i}": w for i, w in enumerate(self.weights)}
        tensors.update({f"b{i}": b for i, b in enumerate(self.biases)})
        if self.anchor is not None:
            tensors["anchor"] = self.anchor
        return {"n_layers": len(self.weights), "n_noise": self.n_noise, "activation": self.activation,
                "skip_clamp": self.skip_clamp, "gate_bias": self.gate_bias, "blend": self.blend}, tensors

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        n = int(config["n_layers"])
        return cls(task, budget, [tensors[f"w{i}"] for i in range(n)], [tensors[f"b{i}"] for i in range(n)],
                   int(config["n_noise"]), str(config["activation"]), config["skip_clamp"], info,
                   config.get("gate_bias"), config.get("blend"), tensors.get("anchor"))
