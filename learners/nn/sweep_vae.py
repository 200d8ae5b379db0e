"""k copies of one trained VAE (:class:`~privbench.learners.nn.vae.Autoencoder`), trained on as a
sweep: the privacy-preserving VAE's front end (chi-square paper §V-B), one member per budget.

Every member starts from the same pretrained encoder and decoder (the VAE is trained once,
:func:`~privbench.learners.nn.vae.train_autoencoder`, and reused across budgets), then each is
fine-tuned with its own privacy weight.  Image tasks only (sigmoid decoder, Bernoulli
likelihood: the per-pixel cross-entropy summed over pixels, as the VAE was pretrained).
"""

from __future__ import annotations

import torch
from torch import nn

from .sweep import SweepMLP, sweep_slice
from .vae import Autoencoder


def _load(mlp: SweepMLP, tensors: dict[str, torch.Tensor], prefix: str) -> None:
    """Copy the plain layers ``{prefix}.{j}.*`` into every member of ``mlp``."""
    with torch.no_grad():
        linears = [m for m in mlp.net if hasattr(m, "weight")]
        for j, lin in enumerate(linears):
            lin.weight.copy_(tensors[f"{prefix}.{j}.weight"].to(lin.weight).expand_as(lin.weight))
            lin.bias.copy_(tensors[f"{prefix}.{j}.bias"].to(lin.bias).view(1, 1, -1).expand_as(lin.bias))


class SweepVAE(nn.Module):
    """k VAEs with the pretrained weights of ``ae`` (an image Autoencoder) in every member.

    Shapes: input x (n, d_u) in [0, 1], shared by the members; codes (k, n, latent_dim).
    """

    def __init__(self, ae: Autoencoder, k: int, device: torch.device) -> None:
        super().__init__()
        if ae.config["output"] != "sigmoid":
            raise ValueError("SweepVAE serves image autoencoders (sigmoid output) only")
        cfg = ae.config
        self.d_z, self.d_u = int(cfg["latent_dim"]), int(cfg["d_u"])
        enc_sizes = [ae.tensors["enc.0.weight"].shape[0]] + [
            ae.tensors[f"enc.{j}.weight"].shape[1] for j in range(self._depth(ae, "enc"))]
        dec_sizes = [ae.tensors["dec.0.weight"].shape[0]] + [
            ae.tensors[f"dec.{j}.weight"].shape[1] for j in range(self._depth(ae, "dec"))]
        self.enc, self.dec = SweepMLP(k, enc_sizes, "elu"), SweepMLP(k, dec_sizes, "elu")
        _load(self.enc, ae.tensors, "enc")
        _load(self.dec, ae.tensors, "dec")
        self.to(device)

    @staticmethod
    def _depth(ae: Autoencoder, prefix: str) -> int:
        j = 0
        while f"{prefix}.{j}.weight" in ae.tensors:
            j += 1
        return j

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mu, log var), each (k, n, latent_dim), for x of shape (n, d_u)."""
        h = self.enc(x.expand(self.enc.net[0].k, -1, -1))
        return h[..., :self.d_z], h[..., self.d_z:].clamp(-12.0, 8.0)

    def elbo_terms(self, x: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(y, reconstruction, kl): a posterior draw y (k, n, latent_dim) (reparameterised), the summed
        per-pixel cross-entropy of dec(y) and KL(q(y | x) || N(0, I)), each batch means (k,)."""
        mu, logvar = self.encode(x)
        y = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen, device=mu.device)
        logits = self.dec(y)
        rec = nn.functional.binary_cross_entropy_with_logits(logits, x.expand_as(logits), reduction="none")
        kl = 0.5 * (mu ** 2 + logvar.exp() - 1.0 - logvar).sum(-1)
        return y, rec.sum(-1).mean(-1), kl.mean(-1)

    def member(self, i: int) -> dict[str, torch.Tensor]:
        """Member ``i`` as plain tensors ``enc.*``, ``dec.*`` (the Autoencoder layout)."""
        return {**sweep_slice(self.enc, i, "enc"), **sweep_slice(self.dec, i, "dec")}
