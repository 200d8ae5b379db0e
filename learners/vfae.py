"""Variational fair autoencoder (Louizos, Swersky, Li, Welling & Zemel, "The Variational Fair
Autoencoder", ICLR 2016): the generative-filter paper's Table 2 comparison.

A VAE whose decoder p(x | z1, s) sees S, so that z1 need not carry S to
reconstruct x (the encoder q(z1 | x, s) sees it too with ``encode_s=True``, as in
the paper; by default it does not, see the parameter), plus ``budget`` times the maximum mean
discrepancy between the codes z1 of the S groups (all pairs of groups for
|S| > 2); see :mod:`privbench.learners.nn.vfae` for the objective.  The release
is the code z1 (its posterior mean by default; a draw from q with
``sample_posterior=True``).

Budget semantics (NOT a distortion budget): the budget is the MMD weight beta.
A larger budget asks for MORE privacy (codes of the S groups closer in
distribution), the opposite direction from a distortion budget; budget 0 is the
plain conditional VAE.  The paper's own knob is the same weight (their beta).

Unsupervised VFAE: the paper's semi-supervised model adds a classifier
q(y | z1) for the utility label y and a second latent level z2; a privbench
task carries no utility label, so neither is here.  The generative-filter paper
ran the supervised model.

Release shape: a task's release lives in U's space (d_u columns).  ``release``
``latent`` (default) puts z1 in the first ``latent_dim`` coordinates and zeros
elsewhere (the bench's distortion of it is then not a distortion of the data);
``decoded`` releases sum_k P(S=k) dec(z1, k), a function of z1 alone, in U's space.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_HYPER_INT
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .nn.core import torch_threads
from .nn.vfae import train_vfae
from .registry import register
from .serves import Serves
from .vfae_mechanism import VFAEMechanism

RELEASES = ("latent", "decoded")
DEFAULTS: dict[str, Any] = dict(latent_dim=10, hidden=64, steps=2000, batch_size=128, lr=1e-3, kl_weight=1.0)


@register
class VFAE(Learner):
    """Louizos et al.'s variational fair autoencoder (unsupervised; module docstring).

    Parameters
    ----------
    latent_dim : int or None
        Dimension of z1 (default 10, the generative-filter paper's Adult embedding); at most d_u with
        ``release="latent"`` (a larger value is lowered to d_u).
    hidden : int
        Units of each of the two ELU hidden layers of encoder and decoder.
    steps, batch_size, lr : training (Adam).
    kl_weight : float
        Weight of the KL term of the ELBO.
    release : {"latent", "decoded"}
    sample_posterior : bool
        Release a draw z1 ~ q(z1 | x, s) rather than its mean (the MMD is then taken on draws).
    encode_s : bool
        Whether the encoder sees S where the task observes W = (S, U) (Louizos et al.'s q(z1 | x, s));
        False (default): q(z1 | x), the decoder still gets S.  With S in the encoder the released code
        told S apart better than the raw data on UCI-Abalone (fresh classifier 0.68-0.81 against 0.57,
        beta 0-100; :mod:`privbench.learners.nn.vfae`).
    threads : int or None
        torch intra-op threads while training on CPU.
    """

    name = "vfae"
    summary = ("Louizos et al. variational fair autoencoder (unsupervised): conditional VAE + beta * MMD between "
               "the S groups' codes; releases the code z1; budget = MMD weight beta (more = more private), "
               "NOT a distortion budget")
    serves = Serves(kinds=("mixture",), distortions=("mse",))
    distortions = ("mse",)
    observations = ("useful", "full")
    privacies = ("mi", "map")
    test_params = {"latent_dim": 2, "hidden": 8, "steps": 15, "batch_size": 32}

    def __init__(self, latent_dim: int | None = None, hidden: int = DEFAULTS["hidden"],
                 steps: int = DEFAULTS["steps"], batch_size: int = DEFAULTS["batch_size"], lr: float = DEFAULTS["lr"],
                 kl_weight: float = DEFAULTS["kl_weight"], release: str = "latent", sample_posterior: bool = False,
                 encode_s: bool = False, threads: int | None = 1) -> None:
        self.latent_dim = latent_dim
        self.hidden = hidden
        self.steps = steps
        self.batch_size = batch_size
        self.lr = lr
        self.kl_weight = kl_weight
        self.release = release
        self.sample_posterior = sample_posterior
        self.encode_s = encode_s
        self.threads = threads

    def budget_kind(self) -> str:
        """The MMD weight beta: never a distortion budget."""
        return "mmd-weight"

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """Hyper-parameters with latent_dim filled in (validated)."""
        check_choice("release", self.release, RELEASES)
        hp = {"latent_dim": self.latent_dim if self.latent_dim is not None else min(DEFAULTS["latent_dim"],
                                                                                     int(task.d_u or 1)),
              "hidden": self.hidden, "steps": self.steps, "batch_size": self.batch_size, "lr": self.lr,
              "kl_weight": self.kl_weight, "mmd_on": "sample" if self.sample_posterior else "mean",
              "encode_s": bool(self.encode_s)}
        for key in ("latent_dim", "hidden", "batch_size"):
            v = hp[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_HYPER_INT:
                raise InputError(f"{key}={v!r} must be an integer in [1, {MAX_HYPER_INT}]")
        if isinstance(self.steps, bool) or not isinstance(self.steps, (int, np.integer)) or self.steps < 0:
            raise InputError(f"steps={self.steps!r} must be a non-negative integer")
        for key in ("lr", "kl_weight"):
            v = hp[key]
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0) \
                    or (key == "lr" and v <= 0):
                raise InputError(f"{key}={v!r} must be a finite number {'> 0' if key == 'lr' else '>= 0'}")
        if self.release == "latent" and task.d_u is not None:  # the code is padded into U's d_u coordinates
            hp["latent_dim"] = min(hp["latent_dim"], int(task.d_u))  # (as the latent filter's VAE)
        return hp

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        hp = self.resolved(task, len(samples))
        with torch_threads(self.threads if device.type == "cpu" else None):
            members, last = train_vfae(samples, task, hp, budgets, seed, device)
        prior = np.bincount(np.asarray(samples.s, dtype=np.int64), minlength=task.n_s) / len(samples)
        cfg = {"latent_dim": hp["latent_dim"], "full": task.observation == "full" and hp["encode_s"],
               "release": self.release, "sample_posterior": bool(self.sample_posterior), "s_prior": prior.tolist()}
        out: list[Mechanism] = []
        for i, tensors in enumerate(members):
            info = {"steps": hp["steps"], "latent_dim": hp["latent_dim"], "release": self.release,
                    "final_recon": float(last["recon"][i]), "final_kl": float(last["kl"][i]),
                    "final_mmd": float(last["mmd"][i]),
                    "budget_meaning": "MMD weight beta (larger = more private; not a distortion budget)"}
            out.append(VFAEMechanism(task, float(budgets[i]), cfg, tensors, info))
        return out
