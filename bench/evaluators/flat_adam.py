"""Adam for the bench's small evaluator networks, on one flat buffer: the numbers of
``torch.optim.Adam(params, lr)`` (its defaults otherwise: betas 0.9 / 0.999, eps 1e-8, no weight
decay, no amsgrad, the single-tensor CPU path) bit for bit, at about half the time per step.

Why (2026-11-27): a fresh classifier of 128 hidden units trains on mini-batches of 128, so on
low-dimensional releases a step is mostly Python overhead, and ``torch.optim.Adam.step`` (its hooks,
profiler scopes and one loop iteration per parameter) was a quarter of it.  Here every parameter is a
view into one flat tensor, so a step is one ``cat`` of the gradients and five elementwise operations
on the flat buffer: the same operations, in the same order, as ``torch.optim.adam._single_tensor_adam``
performs per parameter.  ``tests/bench/test_flat_adam.py`` compares the two bit for bit.
"""

from __future__ import annotations

from typing import Any

BETAS = (0.9, 0.999)
EPS = 1e-8


class FlatAdam:
    """Adam over ``params`` (a list of leaf tensors, made views of one flat buffer in place).

    Parameters
    ----------
    params : list of torch.nn.Parameter
        Their storage is replaced by views of one flat buffer with the same values.
    lr : float
    """

    def __init__(self, params: list[Any], lr: float) -> None:
        import torch

        self.params, self.lr, self.step_count = list(params), float(lr), 0
        self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])
        with torch.no_grad():
            offset = 0
            for p in self.params:
                p.set_(self.flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()
        self.exp_avg = torch.zeros_like(self.flat)
        self.exp_avg_sq = torch.zeros_like(self.flat)

    def step(self, loss: Any) -> None:
        """One Adam step on the gradients of the scalar ``loss`` with respect to the parameters."""
        import torch

        grads = torch.autograd.grad(loss, self.params)
        beta1, beta2 = BETAS
        self.step_count += 1
        step = float(self.step_count)
        step_size = self.lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        with torch.no_grad():
            g = torch.cat([q.reshape(-1) for q in grads])
            self.exp_avg.lerp_(g, 1 - beta1)
            self.exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            self.flat.addcdiv_(self.exp_avg, (self.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(EPS),
                               value=-step_size)
