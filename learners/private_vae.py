"""Privacy-preserving VAE: the chi-square paper's §V-B experiment (Wang & Tay, Tables I-II).

A VAE whose latent code Y ~ q(Y | X) is the sanitized data is trained with a privacy term
against the private attribute S (paper eq 26 plus a privacy function, "following the framework
(25)").  ``privacy`` selects the paper's rows:

==========  =====================================================================
``none``    the VAE baseline (no privacy term)
``gap``     GAP: an adversary Q(S | Y) with cross-entropy loss in the min-max; its hidden layers
            are batch-normalised, like the paper's attack model
``gap-a``   GAP-A: the same adversary with instance normalisation instead (the paper's
            "another normalisation"; :mod:`~privbench.learners.nn.normed_adversary`)
``chi2``    the chi-square privacy function of objective (25): max(sqrt(chi2_hat(S; Y)), sqrt(eta))
            with the eq (21) critic of the chi-square sanitizer (:mod:`~privbench.learners.nn.chi2`)
==========  =====================================================================

(the paper's VFAE row is the ``vfae-image`` learner; its IRL row is not implemented.)

Training: the VAE is trained once on the images (:func:`~privbench.learners.nn.vae.train_autoencoder`,
the generative filter's step 1: MLP encoder and decoder, Bernoulli likelihood), then copied into
one member per budget and fine-tuned with that member's privacy weight for ``finetune_steps``
(:mod:`~privbench.learners.nn.private_vae_game`); the pretrained VAE is shared by every budget.

Budget semantics (NOT a distortion budget): the budget is the privacy weight lambda (the paper's
lambda: 20 for GAP, 5 with sqrt(eta) = 0.1 for chi-square); larger asks for more privacy, 0 is a
fine-tuned plain VAE.  The release is the decoded image sigmoid(dec(Y)) of a posterior draw Y
(``sample_posterior``, default: the code the privacy term was trained on) or of the mean: a
privbench release lives in the image's space, and the bench measures the attack on it (data
processing: a Bayes attacker reads no more S from dec(Y) than from Y) and its reconstruction error.

Differences from the paper: MLP encoder and decoder on 28x28 digits instead of ResNet blocks on
faces, a latent of ``latent_dim`` (paper 4,608), the Bernoulli likelihood (the paper's is N(nu(Y), I)),
adversary and critic MLPs of two hidden layers of ``adv_hidden`` units (paper: 2304-1152-576).
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
from .nn.core import seeds, torch_threads
from .nn.private_vae_game import PRIVACY_TERMS, train_private_vaes
from .nn.vae_cache import fit_autoencoder_for
from .private_vae_mechanism import PrivateVAEMechanism
from .registry import register
from .serves import Serves

DEFAULTS: dict[str, Any] = dict(latent_dim=16, hidden=256, vae_steps=1500, finetune_steps=1500, batch_size=128,
                                lr=1e-3, gamma=1.0, adv_hidden=128, adv_steps=5, adv_lr=2e-3, eta=0.01)
# adv_steps 5, adv_lr 2e-3: with 2 critic steps at 1e-3 the chi-square sanitizer fooled its critic at lambda = 80
# (final critic estimate 0.009, below the floor eta; fresh attacker 0.92 against 0.71 with 5 steps at 2e-3; one seed)
INTS = ("latent_dim", "hidden", "vae_steps", "finetune_steps", "batch_size", "adv_hidden", "adv_steps")


@register
class PrivateVAE(Learner):
    """The chi-square paper's privacy-preserving VAE (module docstring).

    Parameters
    ----------
    privacy : {"none", "gap", "gap-a", "chi2"}
        The privacy term (the paper's rows VAE, GAP, GAP-A, chi-square).
    latent_dim, hidden : int
        Code dimension; units of the two ELU hidden layers of encoder and decoder.
    vae_steps, finetune_steps, batch_size, lr : training (Adam): the shared VAE, then each member.
    finetune_lr : float or None
        The members' Adam rate while fine-tuning (None: ``lr``, the VAE's).
    gamma : float
        Weight of the KL term (1: the ELBO).
    adv_hidden, adv_steps, adv_lr : the adversary's (critic's) hidden units, updates per VAE step, rate.
    eta : float
        The chi-square privacy floor of objective (25) (``privacy="chi2"``; the paper's sqrt(eta) = 0.1).
    sample_posterior : bool
        Release dec(Y) of a draw Y ~ q(Y | X) (default) or of its mean.
    share_vae : bool
        The pretrained VAE is the training set's (:func:`~privbench.learners.nn.vae_cache.shared_autoencoder`:
        seeded from a hash of the images and the VAE's settings, trained once and reused by every fit on
        the same data, e.g. the other privacy terms'; True, the default), or trained from the fit's seed.
    threads : int or None
        torch intra-op threads while training on CPU.
    """

    name = "private-vae"
    gpu_task_kinds = ("image",)
    summary = ("chi-square paper §V-B privacy-preserving VAE: one pretrained VAE fine-tuned per budget with a "
               "privacy term on its code (none, GAP, GAP-A: instance-normalised adversary, chi-square); "
               "budget = privacy weight lambda, NOT a distortion budget")
    serves = Serves(kinds=("image",), distortions=("mse", "xent"))
    observations = ("useful", "full")
    privacies = ("map", "mi", "chi2")
    test_params = {"latent_dim": 2, "hidden": 8, "vae_steps": 10, "finetune_steps": 10, "batch_size": 32,
                   "adv_hidden": 8, "adv_steps": 1}

    def __init__(self, privacy: str = "chi2", latent_dim: int = DEFAULTS["latent_dim"],
                 hidden: int = DEFAULTS["hidden"], vae_steps: int = DEFAULTS["vae_steps"],
                 finetune_steps: int = DEFAULTS["finetune_steps"], batch_size: int = DEFAULTS["batch_size"],
                 lr: float = DEFAULTS["lr"], gamma: float = DEFAULTS["gamma"], adv_hidden: int = DEFAULTS["adv_hidden"],
                 adv_steps: int = DEFAULTS["adv_steps"], adv_lr: float = DEFAULTS["adv_lr"], eta: float = DEFAULTS["eta"],
                 sample_posterior: bool = True, share_vae: bool = True, finetune_lr: float | None = None,
                 threads: int | None = 1) -> None:
        self.privacy = privacy
        self.latent_dim = latent_dim
        self.hidden = hidden
        self.vae_steps = vae_steps
        self.finetune_steps = finetune_steps
        self.batch_size = batch_size
        self.lr = lr
        self.gamma = gamma
        self.adv_hidden = adv_hidden
        self.adv_steps = adv_steps
        self.adv_lr = adv_lr
        self.eta = eta
        self.sample_posterior = sample_posterior
        self.share_vae = share_vae
        self.finetune_lr = finetune_lr
        self.threads = threads

    def budget_kind(self) -> str:
        """The privacy weight lambda: never a distortion budget."""
        return "privacy-weight"

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """Hyper-parameters (validated), with the VAE's settings for ``train_autoencoder``."""
        check_choice("privacy", self.privacy, PRIVACY_TERMS)
        hp = {key: getattr(self, key) for key in DEFAULTS}
        hp["finetune_lr"] = self.lr if self.finetune_lr is None else self.finetune_lr
        for key in INTS:
            v = hp[key]
            low = 0 if key.endswith("_steps") and key != "adv_steps" else 1
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not low <= v <= MAX_HYPER_INT:
                raise InputError(f"{key}={v!r} must be an integer in [{low}, {MAX_HYPER_INT}]")
        for key in ("lr", "finetune_lr", "adv_lr", "gamma", "eta"):
            v = hp[key]
            positive = key in ("lr", "finetune_lr", "adv_lr")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 \
                    or (positive and v == 0):
                raise InputError(f"{key}={v!r} must be a finite number {'> 0' if positive else '>= 0'}")
        if not isinstance(self.share_vae, bool):
            raise InputError(f"share_vae={self.share_vae!r} must be true or false")
        hp.update(privacy=self.privacy, finetune_lr=float(hp["finetune_lr"]), kappa=0.0, lipschitz=1.0,
                  sample_posterior=bool(self.sample_posterior))
        return hp

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        hp = self.resolved(task, len(samples))
        seed_ae, seed_ft = seeds(seed, 2)
        with torch_threads(self.threads if device.type == "cpu" else None):
            ae = fit_autoencoder_for(samples, task, hp, seed_ae, device, self.share_vae)
            members = train_private_vaes(ae, samples, task, hp, budgets, self.privacy, seed_ft, device)
        cfg = {**ae.config, "sample_posterior": hp["sample_posterior"]}
        out: list[Mechanism] = []
        for b, (tensors, info) in zip(budgets, members):
            info = {**info, "vae_steps": hp["vae_steps"], "vae_loss": ae.info["vae_loss"], "latent_dim": hp["latent_dim"],
                    "budget_meaning": "privacy weight lambda (larger = more private; not a distortion budget)"}
            out.append(PrivateVAEMechanism(task, float(b), cfg, tensors, info))
        return out
