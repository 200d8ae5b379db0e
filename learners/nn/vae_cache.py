"""One trained VAE per training set and VAE settings, shared by every fit that asks for it.

The generative filter (step 1) and the privacy-preserving VAE (its pretraining) train a VAE that
does not depend on the budget nor on what the filter or the fine-tuning does after it.  A suite
runs several such learners (the latent filter's two formulations, the private VAE's four privacy
terms) on the same training set of a repetition: :func:`shared_autoencoder` trains that VAE once
and hands it to all of them.

Determinism: the VAE is seeded from a hash of the training set's U and the VAE's settings
(:func:`autoencoder_key`), not from the fit's seed, so every fit on the same training set gets the
same VAE (bit for bit, trained here or loaded), whatever learner or seed asks for it; the part
after it (filter, fine-tuning) keeps the fit's own seed.  Where it is kept: in this process (the
last few), and, while :func:`cache_directory` is active (``privbench run`` holds one for the run),
in files under that directory, which a run's worker processes share (a lock file per VAE: a
second process that asks for a VAE being trained waits for it rather than training it again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import io
import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import torch

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .vae import Autoencoder, train_autoencoder

#: Environment variable naming the directory of VAE files shared by a run's processes.
CACHE_ENV = "PRIVBENCH_AUTOENCODER_CACHE"
#: The hyper-parameters :func:`~privbench.learners.nn.vae.train_autoencoder` reads.
VAE_KEYS = ("latent_dim", "hidden", "vae_steps", "batch_size", "lr", "gamma", "kappa", "lipschitz")
INT_KEYS = ("latent_dim", "hidden", "vae_steps", "batch_size")
MEMORY_SIZE = 10  # a bundle of repetitions (5 in the paper suite) and more: a VAE of the suite is 0.1-2 MB
MEMORY: "OrderedDict[str, Autoencoder]" = OrderedDict()


def autoencoder_key(samples: Samples, task: Task, hp: dict[str, Any], device: torch.device) -> str:
    """A hash of what determines the VAE: U of the training set, the task's kind and d_u, the VAE's
    settings and the device type (32 hex digits)."""
    u = np.ascontiguousarray(np.asarray(samples.u, dtype=np.float64).reshape(len(samples), -1))
    head = {"kind": task.kind, "d_u": task.d_u, "device": torch.device(device).type,
            "hp": {k: (int(hp[k]) if k in INT_KEYS else float(hp[k])) for k in VAE_KEYS}}
    h = hashlib.sha256(json.dumps(head, sort_keys=True).encode())
    h.update(str(u.shape).encode())
    h.update(u.tobytes())
    return h.hexdigest()[:32]


def shared_autoencoder(samples: Samples, task: Task, hp: dict[str, Any], device: torch.device) -> Autoencoder:
    """The VAE of this training set and settings: from this process, from the run's directory, or trained
    (seeded from :func:`autoencoder_key`) and kept in both."""
    key = autoencoder_key(samples, task, hp, device)
    if key in MEMORY:
        MEMORY.move_to_end(key)
        return copy(MEMORY[key])
    directory = os.environ.get(CACHE_ENV)
    if directory and Path(directory).is_dir():
        ae = from_directory(Path(directory), key, lambda: train_autoencoder(samples, task, hp, seed_of(key), device))
    else:
        ae = train_autoencoder(samples, task, hp, seed_of(key), device)
    MEMORY[key] = ae
    while len(MEMORY) > MEMORY_SIZE:
        MEMORY.popitem(last=False)
    return copy(ae)


def seed_of(key: str) -> int:
    """The VAE's training seed: the first 8 hex digits of its key (31 bits)."""
    return int(key[:8], 16) % 2**31


def copy(ae: Autoencoder) -> Autoencoder:
    """A copy whose dicts a caller may change (the tensors themselves are shared, never written)."""
    return dataclasses.replace(ae, config=dict(ae.config), tensors=dict(ae.tensors), info=dict(ae.info))


def from_directory(directory: Path, key: str, train: Any) -> Autoencoder:
    """The VAE file ``key`` under ``directory``, or ``train()`` written there (under a lock per key)."""
    path = directory / f"{key}.pt"
    with open(directory / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.exists():
                blob = torch.load(io.BytesIO(path.read_bytes()), weights_only=True)
                return Autoencoder(json.loads(blob["config"]), dict(blob["tensors"]), json.loads(blob["info"]))
            ae = train()
            buf = io.BytesIO()
            torch.save({"config": json.dumps(ae.config), "info": json.dumps(ae.info), "tensors": ae.tensors}, buf)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".pt", dir=directory)
            with os.fdopen(fd, "wb") as fh:
                fh.write(buf.getvalue())
            os.replace(tmp, path)
            return ae
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def cache_directory() -> Iterator[Path]:
    """Within the block, VAEs are shared through files in a fresh temporary directory (removed after):
    processes started inside it (a run's workers) inherit it through :data:`CACHE_ENV`."""
    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory(prefix="privbench-vae-") as d:
        os.environ[CACHE_ENV] = d
        try:
            yield Path(d)
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old


def fit_autoencoder_for(samples: Samples, task: Task, hp: dict[str, Any], seed: int, device: torch.device,
                        share: bool) -> Autoencoder:
    """A fit's VAE: the training set's shared one (:func:`shared_autoencoder`; ``share``, the learners'
    ``share_vae``), else one trained from the fit's own ``seed``."""
    return shared_autoencoder(samples, task, hp, device) if share else train_autoencoder(samples, task, hp, seed, device)
