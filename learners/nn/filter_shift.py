"""The generative filter's optional nonlinear mean shift (the filter paper's footnote 2: "the filter can be
nonlinear such as a small neural network"), batched over a filter sweep.

With ``filter_hidden`` = H > 0 the filter is ::

    z~ = z + Gamma [w; y] + delta(mu(u), y),   delta = FC(H)-ELU-FC(d_z) on [mu(u); y]

The shift depends on the sample only through its posterior mean mu(u) and its S features y, never on
the posterior draw z or the noise w, so the filtered posterior stays Gaussian,
q_psi(. | u) = N(mu + Gamma_y y + delta, Sigma + Gamma_w Gamma_w^T), and the closed-form divergences of
:func:`~privbench.learners.nn.vae.gaussian_divergence` (the budget b) hold unchanged with the mean shift
Gamma_y y + delta.  The last layer starts at zero, so training starts from the linear filter; scaling the
last layer by t scales delta by t (the projection onto the budget scales Gamma and delta together).
H = 0 is the paper's linear filter (no shift network at all).
"""

from __future__ import annotations

from typing import Sequence

import torch

from .core import generator, init_module
from .sweep import SweepLinear, SweepMLP, mlp_forward, sweep_slice

PREFIX = "shift"


class FilterShift:
    """K shift networks delta (one per sweep member), or none (``hidden`` = 0: every shift is 0)."""

    def __init__(self, k: int, d_z: int, d_f: int, hidden: int, g_seeds: Sequence[int], device: torch.device) -> None:
        self.d_z, self.net = d_z, None
        if hidden > 0:
            per = [init_module(SweepMLP(k // len(g_seeds), [d_z + d_f, hidden, d_z], "elu"), generator(s ^ 0x5F17))
                   for s in g_seeds]
            net = SweepMLP(k, [d_z + d_f, hidden, d_z], "elu")
            with torch.no_grad():
                for big, parts in zip(net.parameters(), zip(*(list(m.parameters()) for m in per))):
                    big.copy_(torch.cat(list(parts), 0))
                last = self.last(net)
                last.weight.zero_()
                last.bias.zero_()
            self.net = net.to(device)

    @staticmethod
    def last(net: SweepMLP) -> SweepLinear:
        layer = net.net[-1]
        assert isinstance(layer, SweepLinear)
        return layer

    def parameters(self) -> list[torch.Tensor]:
        return [] if self.net is None else list(self.net.parameters())

    def __call__(self, mu_b: torch.Tensor, f_b: torch.Tensor) -> torch.Tensor | None:
        """delta (K, b, d_z) for posterior means mu_b (K, b, d_z) and S features f_b (K, b, d_f); None if linear."""
        if self.net is None:
            return None
        return self.net(torch.cat([mu_b, f_b], -1))

    def block(self, r: int, k: int) -> "FilterShift":
        """Members r k .. r k + k - 1 (set r's filters) as a sweep of k (shares nothing with self)."""
        out = FilterShift.__new__(FilterShift)
        out.d_z, out.net = self.d_z, None
        if self.net is not None:
            sizes = [self.net.net[0].d_in, self.net.net[0].d_out, self.d_z]
            out.net = SweepMLP(k, sizes, "elu").to(self.net.net[0].weight.device)
            with torch.no_grad():
                for p, q in zip(out.net.parameters(), self.net.parameters()):
                    p.copy_(q[r * k:(r + 1) * k].detach())
        return out

    @torch.no_grad()
    def scale_(self, t: torch.Tensor) -> None:
        """Multiply each member's shift by t (k,) (its last, linear layer)."""
        if self.net is not None:
            last = self.last(self.net)
            last.weight.mul_(t.view(-1, 1, 1))
            last.bias.mul_(t.view(-1, 1, 1))

    def member(self, i: int) -> dict[str, torch.Tensor]:
        """Member i's plain tensors ``shift.*`` for the mechanism (empty when linear)."""
        return {} if self.net is None else sweep_slice(self.net, i, PREFIX)


def apply_shift(tensors: dict[str, torch.Tensor], mu: torch.Tensor, y: torch.Tensor) -> torch.Tensor | float:
    """A fitted mechanism's delta(mu, y) from its plain tensors (0.0 for the linear filter)."""
    if f"{PREFIX}.0.weight" not in tensors:
        return 0.0
    return mlp_forward(tensors, PREFIX, torch.cat([mu, y.to(mu.dtype)], -1), "elu")
