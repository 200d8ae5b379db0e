"""torch helpers shared by the learners: device, seeded generators and init, guards,
thread count, learning-rate schedule, tensors from arrays.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator, Sequence

import numpy as np
import torch
from torch import nn

from privbench.datasets.errors import InputError

from ..errors import TrainingError
from .sweep import SweepLinear

DEVICES = ("auto", "cpu", "cuda")
#: training rows (the first ones) on which a learner scores its final adversary (or critic) after
#: training, for the ``training_adversary`` facts of a mechanism (never used for evaluation)
ADVERSARY_CHECK_N = 4096


def resolve_device(device: Any, gpu_pays: bool = True) -> torch.device:
    """``auto`` -> cuda if available and ``gpu_pays`` (the learner's networks are large enough on this
    task: :meth:`privbench.learners.Learner.prefers_gpu`), else cpu; ``cuda`` without a GPU is an InputError."""
    if isinstance(device, torch.device):
        return device
    if device not in DEVICES and not (isinstance(device, str) and device.startswith("cuda:")):
        raise InputError(f"device={device!r} is unknown (allowed: {', '.join(DEVICES)})")
    if device == "auto":
        return torch.device("cuda" if gpu_pays and torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device={device!r} asked for, but no CUDA GPU is available (use cpu or auto)")
    return torch.device(device)


def seeds(seed: int, n: int) -> list[int]:
    """``n`` independent 63-bit seeds derived from ``seed`` (numpy SeedSequence)."""
    return [int(x) for x in np.random.SeedSequence(seed).generate_state(n, dtype=np.uint64) >> np.uint64(1)]


def generator(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """A torch.Generator on ``device`` seeded with ``seed`` (never the global RNG)."""
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def rng_generator(rng: np.random.Generator, device: torch.device | str = "cpu") -> torch.Generator:
    """A torch.Generator seeded from a numpy Generator (for ``release``)."""
    return generator(int(rng.integers(0, 2**63 - 1)), device)


@torch.no_grad()
def init_module(module: nn.Module, gen: torch.Generator) -> nn.Module:
    """Re-initialise every Linear/SweepLinear/Conv layer from ``gen`` (PyTorch's default scheme)."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)):
            fan_in = m.weight[0].numel() if not isinstance(m, nn.ConvTranspose2d) else m.weight.shape[0] * m.weight[0, 0].numel()
            bound = 1.0 / math.sqrt(max(fan_in, 1))
            m.weight.uniform_(-bound, bound, generator=gen)
            if m.bias is not None:
                m.bias.uniform_(-bound, bound, generator=gen)
        elif isinstance(m, SweepLinear):
            m.reset_parameters(gen)
    return module


def check_loss(loss: torch.Tensor, step: int, what: str = "loss") -> None:
    """Raise TrainingError naming the step when ``loss`` has a NaN/inf entry."""
    if not bool(torch.isfinite(loss).all()):
        raise TrainingError(f"training diverged: {what} is not finite at step {step}")


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` intra-op threads, then restore (None: leave as is).

    Small networks run faster on one thread here (see the learners' benchmarks).
    """
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def cosine_lr(optimizers: Sequence[tuple[torch.optim.Optimizer, float]], step: int, total: int,
              floor: float = 0.01) -> None:
    """Set each optimizer's learning rate to base * (floor + (1 - floor) (1 + cos(pi step/total)) / 2)."""
    factor = floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * step / total))
    for opt, base in optimizers:
        for group in opt.param_groups:
            group["lr"] = base * factor


def to_tensor(x: np.ndarray, device: torch.device, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.as_tensor(np.ascontiguousarray(x), dtype=dtype, device=device)
