"""Shared torch building blocks of the learners.

``core`` (devices, seeded generators and initialisation, thread limits, guards),
``sweep`` (layers batched over a budget sweep, plain-tensor MLPs), ``release`` and
``adversary`` (PPAN's continuous release networks and adversaries), ``finite_game``
(the finite privatizer-versus-adversary game of PPAN and GAP), ``chi2`` (the
variational chi-square estimate), ``vae`` (the generative filter's VAE and latent
divergences) and ``leakage`` (Gaussian-approximation leakage from samples).

This package's top level is the public path for the torch helpers that code
outside learners/ uses.
"""

from .core import generator, init_module, resolve_device, seeds, torch_threads
from .vae_cache import cache_directory

__all__ = ["cache_directory", "generator", "init_module", "resolve_device", "seeds", "torch_threads"]
