"""Shared torch building blocks: devices, generators, thread limits, initialisation.

The public path for every torch helper that code outside learners/ uses.
"""

from privbench.learners.torch_utils import generator, init_module, resolve_device, seeds, torch_threads

__all__ = ["generator", "init_module", "resolve_device", "seeds", "torch_threads"]
