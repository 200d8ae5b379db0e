"""Adam for small networks on the CPU, on one flat buffer: the numbers of ``torch.optim.Adam(params, lr)``
(its defaults otherwise: betas 0.9 / 0.999, eps 1e-8, no weight decay, no amsgrad; the single-tensor
and the ``foreach`` CPU paths agree) bit for bit, at about half the time per step.  :func:`adam` gives one
where every parameter is a CPU tensor of one dtype, else torch's own (a GPU's Adam takes other paths).

Why (2026-11-27): a fresh classifier of 128 hidden units trains on mini-batches of 128, so on
low-dimensional releases a step is mostly Python overhead, and ``torch.optim.Adam.step`` (its hooks,
profiler scopes and one loop iteration per parameter) was a quarter of it.  Here every parameter is a
view into one flat tensor, so a step is one ``cat`` of the gradients and five elementwise operations
on the flat buffer: the same operations, in the same order, as ``torch.optim.adam._single_tensor_adam``
performs per parameter.  ``tests/learners/test_flat_adam.py`` compares the two bit for bit.
Used by the bench's fresh classifier, post-hoc attacker and mismatch MLPs, and by the learners'
CPU training loops where an optimizer step was a large share of a step (the continuous PPAN game,
GAP's mixture privatizer).
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

        self.params, self.step_count = list(params), 0
        self.param_groups = [{"lr": float(lr)}]  # as torch's optimizers: a schedule may set it
        self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])
        with torch.no_grad():
            offset = 0
            for p in self.params:
                p.set_(self.flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()
        self.exp_avg = torch.zeros_like(self.flat)
        self.exp_avg_sq = torch.zeros_like(self.flat)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients (``.grad = None``), as torch's ``zero_grad()``."""
        for p in self.params:
            p.grad = None

    def step(self, loss: Any = None) -> None:
        """One Adam step on the gradients of the scalar ``loss`` with respect to the parameters, or
        (no ``loss``) on their ``.grad`` after a ``backward()``, as torch's ``step()``."""
        import torch

        if loss is not None:
            grads = torch.autograd.grad(loss, self.params)
        else:
            grads = [p.grad for p in self.params]
            if any(g is None for g in grads):
                raise RuntimeError("FlatAdam.step(): a parameter has no gradient (torch's Adam would skip it)")
        beta1, beta2 = BETAS
        self.step_count += 1
        step = float(self.step_count)
        step_size = self.param_groups[0]["lr"] / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        with torch.no_grad():
            g = torch.cat([q.reshape(-1) for q in grads])
            self.exp_avg.lerp_(g, 1 - beta1)
            self.exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            self.flat.addcdiv_(self.exp_avg, (self.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(EPS),
                               value=-step_size)


def adam(params: list[Any], lr: float, **options: Any) -> Any:
    """:class:`FlatAdam` where every parameter is a CPU tensor of one dtype, else
    ``torch.optim.Adam(params, lr=lr, **options)`` (``options``: torch's, e.g. ``foreach``; they
    do not change the CPU numbers)."""
    import torch

    params = list(params)
    if params and all(p.device.type == "cpu" for p in params) and len({p.dtype for p in params}) == 1:
        return FlatAdam(params, lr)
    return torch.optim.Adam(params, lr=lr, **options)
