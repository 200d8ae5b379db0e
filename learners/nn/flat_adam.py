"""Adam for small networks on the CPU, on one flat buffer: the numbers of ``torch.optim.Adam(params, lr)``
(its defaults otherwise: betas 0.9 / 0.999, eps 1e-8, no weight decay, no amsgrad; the single-tensor
and the ``foreach`` CPU paths agree) bit for bit, at about half the time per step.  :func:`adam` gives one
to a network of CPU tensors of one dtype and at most :data:`FLAT_MAX` parameters, else torch's own (a
GPU's Adam takes other code paths).

Why (2026-11-27): a fresh classifier of 128 hidden units trains on mini-batches of 128, so on
low-dimensional releases a step is mostly Python overhead, and ``torch.optim.Adam.step`` (its hooks,
profiler scopes and one loop iteration per parameter) was a quarter of it.  Here a step gathers the
gradients and the parameters into flat tensors, applies five elementwise operations there (the same
operations, in the same order, as ``torch.optim.adam._single_tensor_adam`` performs per parameter)
and copies the parameters back.  ``tests/learners/test_flat_adam.py`` compares the two bit for bit.
Used by the bench's fresh classifier, post-hoc attacker and mismatch MLPs (``shared=True``), and through
:func:`adam` by the learners' small CPU networks (the continuous PPAN game, GAP's mixture privatizer, the
chi-square sanitizers and their critic, the latent filter, the VAE and VFAE).
"""

from __future__ import annotations

from typing import Any

BETAS = (0.9, 0.999)
EPS = 1e-8


class FlatAdam:
    """Adam over ``params`` (a list of leaf tensors of one dtype on the CPU).

    By default each step gathers the parameters and their gradients into flat buffers (so a parameter
    changed between steps is read as it is), updates them there and copies the new values back: every
    parameter keeps its own storage (nothing saved or moved later sees a shared buffer).  With
    ``shared=True`` the parameters become views of one flat buffer instead (no gathering or copying:
    for a network its caller keeps to itself, such as the bench's fresh classifier, whose first layer
    on an image release has 100,000 weights).

    Parameters
    ----------
    params : list of torch.Tensor
    lr : float
    shared : bool
    """

    def __init__(self, params: list[Any], lr: float, shared: bool = False) -> None:
        import torch

        self.params, self.step_count = list(params), 0
        self.param_groups = [{"lr": float(lr)}]  # as torch's optimizers: a schedule may set it
        self.sizes = [p.numel() for p in self.params]
        self.flat = None
        if shared:
            self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])
            with torch.no_grad():
                for p, view in zip(self.params, self.flat.split(self.sizes)):
                    p.set_(view.view_as(p))
        n = sum(self.sizes)
        dtype = self.params[0].dtype if self.params else torch.float32
        self.exp_avg = torch.zeros(n, dtype=dtype)
        self.exp_avg_sq = torch.zeros(n, dtype=dtype)

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
            flat = self.flat if self.flat is not None else torch.cat([p.detach().reshape(-1) for p in self.params])
            self.exp_avg.lerp_(g, 1 - beta1)
            self.exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            flat.addcdiv_(self.exp_avg, (self.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(EPS), value=-step_size)
            if self.flat is None:
                for p, new in zip(self.params, flat.split(self.sizes)):
                    p.copy_(new.view_as(p))


#: :func:`adam` gives :class:`FlatAdam` to networks of at most this many parameters: above it the
#: gathering and copying back cost more than the per-parameter overhead they save (a VAE on images).
FLAT_MAX = 65_536


def adam(params: list[Any], lr: float, **options: Any) -> Any:
    """:class:`FlatAdam` where every parameter is a CPU tensor of one dtype and there are at most
    :data:`FLAT_MAX` of them, else ``torch.optim.Adam(params, lr=lr, **options)`` (``options``: torch's,
    e.g. ``foreach``; they do not change the CPU numbers)."""
    import torch

    params = list(params)
    if (params and all(p.device.type == "cpu" for p in params) and len({p.dtype for p in params}) == 1
            and sum(p.numel() for p in params) <= FLAT_MAX):
        return FlatAdam(params, lr)
    return torch.optim.Adam(params, lr=lr, **options)
