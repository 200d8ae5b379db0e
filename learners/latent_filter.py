"""Generative latent filter (Chen, Navidi & Rajagopal, §2, §6.3, §6.7).

A VAE is trained once on U (paper step 1, eq 3 / eq 14); then, with encoder and
decoder frozen, a linear filter in latent space (eq 49)::

    z ~ q(z | u) = N(mu(u), diag sigma^2(u)),   z~ = z + Gamma [w; y],   Z = decoder(z~)

with w ~ N(0, I) of ``noise_dim`` and y the one-hot S (observation ``full``; the
standardised S vector for a ``gaussian`` task; absent for ``useful``, where the
filter only adds noise) is trained adversarially (step 2, eqs 15-17): it
minimises minus the loss of an adversary h predicting S from z~ (cross-entropy
for a label S, squared error for a continuous S) plus ``beta`` times a utility
loss: the task distortion of the decoded release (``formulation="distortion"``,
the default), or, as the paper's eq (15), the loss of a utility classifier nu
on z~ trained on the task's utility labels (``formulation="utility"``), subject to a
divergence budget enforced by eq (17)'s penalty lambda_1 [D - b]_+ +
lambda_2 [D - b]_+^2.  Eq (17) prints the square two-sided, (D - b)^2: that pulls
every filter to D = b whatever its privacy, and with the paper's
lambda = 1000 it swamped the adversarial gradient in our runs (6x6 image task,
KL b = 2: fresh-classifier accuracy 0.84 two-sided vs 0.68 one-sided), so the
square is one-sided here.

Budget semantics (NOT a distortion budget): the budget is the paper's b in
eq (16), the batch mean over samples of D(q_psi(. | u) || q_phi(. | u)) between
the filtered and raw latent posteriors, both Gaussian:
q_phi = N(mu, Sigma), q_psi = N(mu + Gamma_y y, Sigma + Gamma_w Gamma_w^T).
``divergence``: ``kl`` (the paper's experiments), ``chi2`` (standard
chi-square, f(t) = (t - 1)^2; infinite unless Gamma_w Gamma_w^T < Sigma), or
``mahalanobis``, the paper's implementation (§6.3.1, last paragraph)
E||Gamma [w; y]||^2_{Sigma^-1} (= 2 KL for a pure mean shift, eq 18).  After
training Gamma is scaled by the largest t in [0, 1] that meets the budget on
the training set (all three are increasing in t), so the budget holds exactly
there.  The privacy it targets is the paper's: a log-loss adversary on S (an
MI surrogate; the paper reports its accuracy), hence privacies ``mi``/``map``.

Closed forms verified numerically (tests/learners/test_latent_filter.py): the
paper's Gaussian KL (§6.3.1) and eq (18) are correct.  Its chi-square closed
forms are not: for Sigma_1 = Sigma_2 it gives (1/2)(e^{-s} - 1)^2 with
s = ||mu_1 - mu_2||^2_{Sigma^-1} / 2 (bounded by 1/2), while the true value with
its own f(t) = (t - 1)^2 / 2 is (1/2)(exp(||mu_1 - mu_2||^2_{Sigma^-1}) - 1);
the general case is |Q| / (|P|^{1/2} |2Q - P|^{1/2}) exp(d^T (2Q - P)^{-1} d) - 1
for chi^2(N(m_P, P) || N(m_Q, Q)), d = m_P - m_Q, finite iff 2Q - P > 0.

Per-user filters (§6.7.5): :meth:`LatentFilter.fit_users` trains the VAE once on
all samples and one filter per user on that user's rows only;
:meth:`fit_autoencoder` / :meth:`fit_filter` do the two steps separately (e.g.
a VAE on public data, filters on each user's private partition, each user with
its own S).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_HYPER_INT
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_budgets, check_choice
from .latent_filter_mechanism import LatentFilterMechanism
from .nn.core import check_loss, generator, resolve_device, seeds, torch_threads
from .nn.flat_adam import adam
from .nn.latent_game import (adversary_loss, filter_divergence, final_adversary, latent_tensors, project_filters,
                             utility_loss)
from .nn.filter_sets import FilterSets, member_block, start_sweep
from .nn.sweep import SweepMLP
from .nn.utility import UtilityHeads, utility_targets
from .nn.vae import Autoencoder, train_autoencoder
from .nn.vae_cache import fit_autoencoder_for
from .registry import register
from .serves import Serves

DIVERGENCES = ("kl", "chi2", "mahalanobis")
FORMULATIONS = ("distortion", "utility")
SCHEDULES: dict[str, dict[str, Any]] = {
    # paper §6.7: MNIST VAE FC(300)-ELU-FC(300), 10-d latent, gamma=0.1, kappa=1, C_L=4 (eq 14), Adam 1e-3,
    # batch 128, adversary FC(15)-ELU, beta=2, lambda1=lambda2=1000 halved at mid-training (floor 2)
    "paper": dict(latent_dim=10, hidden=300, vae_steps=6000, filter_steps=6000, batch_size=128, lr=1e-3,
                  gamma=0.1, kappa=1.0, lipschitz=4.0, adv_hidden=15, adv_steps=1, beta=2.0),
    "default": dict(latent_dim=8, hidden=128, vae_steps=1500, filter_steps=1500, batch_size=128, lr=1e-3,
                    gamma=1.0, kappa=0.0, lipschitz=4.0, adv_hidden=15, adv_steps=1, beta=1.0),
}


# --------------------------------------------------------------------------
# learner
# --------------------------------------------------------------------------


@register
class LatentFilter(Learner):
    """Chen, Navidi & Rajagopal's generative latent filter (VAE + linear filter + adversary).

    Parameters
    ----------
    schedule : {"default", "paper"}
        Defaults for latent_dim, hidden, vae_steps, filter_steps, batch_size, lr, gamma
        (KL weight of eq 12/14), kappa and lipschitz (the decoder gradient penalty of
        eq 14), adv_hidden, adv_steps, beta (weight of the decoded distortion).
    latent_dim, hidden, vae_steps, filter_steps, batch_size, lr, gamma, kappa, lipschitz,
    adv_hidden, adv_steps, beta : optional overrides of the schedule.
    divergence : {"kl", "chi2", "mahalanobis"}
        What the budget b bounds (module docstring).
    noise_dim : int or None
        Dimension of w (None: latent_dim, as the paper's MNIST filter).
    sample_posterior : bool
        Release from z ~ q(z | u) (True) or from its mean.
    penalty : float
        lambda_1 = lambda_2 of eq (17) at the start; halved at mid-training, floor 2.
    formulation : {"distortion", "utility"}
        The filter's utility term (weight ``beta``): the decoded release's task distortion
        (``distortion``, the default), or the paper's eq (15), the loss of a utility classifier
        nu on z~ trained on the task's utility labels (``utility``; needs ``Task.utility``).
    share_vae : bool
        Step 1's VAE is the training set's (:func:`~privbench.learners.nn.vae_cache.shared_autoencoder`:
        seeded from a hash of U and the VAE's settings, trained once and reused by every fit on the same
        data, e.g. the other formulation's; True, the default), or trained from the fit's seed (False).
    threads : int or None
        torch intra-op threads while training on CPU.
    """

    name = "latent-filter"
    gpu_task_kinds = ("image",)
    summary = ("Chen-Navidi-Rajagopal generative filter: VAE + linear latent filter z + Gamma[w; onehot S] "
               "vs a log-loss adversary; budget = latent KL/chi2 divergence b, NOT a distortion budget")
    serves = Serves(kinds=("image", "mixture", "gaussian"))
    protocols = ("two-user",)
    observations = ("useful", "full")
    privacies = ("mi", "map")
    test_params = {"latent_dim": 2, "hidden": 8, "vae_steps": 15, "filter_steps": 15, "batch_size": 32}
    batches_fits = True  # a case's repetitions: one filter sweep over every set's budgets (nn.filter_sets)
    _KEYS = ("latent_dim", "hidden", "vae_steps", "filter_steps", "batch_size", "lr", "gamma", "kappa",
             "lipschitz", "adv_hidden", "adv_steps", "beta")

    def __init__(self, schedule: str = "default", latent_dim: int | None = None, hidden: int | None = None,
                 vae_steps: int | None = None, filter_steps: int | None = None, batch_size: int | None = None,
                 lr: float | None = None, gamma: float | None = None, kappa: float | None = None,
                 lipschitz: float | None = None, adv_hidden: int | None = None, adv_steps: int | None = None,
                 beta: float | None = None, divergence: str = "kl", noise_dim: int | None = None,
                 sample_posterior: bool = True, penalty: float = 1000.0, formulation: str = "distortion",
                 share_vae: bool = True, threads: int | None = 1) -> None:
        self.schedule = schedule
        self.latent_dim = latent_dim
        self.hidden = hidden
        self.vae_steps = vae_steps
        self.filter_steps = filter_steps
        self.batch_size = batch_size
        self.lr = lr
        self.gamma = gamma
        self.kappa = kappa
        self.lipschitz = lipschitz
        self.adv_hidden = adv_hidden
        self.adv_steps = adv_steps
        self.beta = beta
        self.divergence = divergence
        self.noise_dim = noise_dim
        self.sample_posterior = sample_posterior
        self.penalty = penalty
        self.formulation = formulation
        self.share_vae = share_vae
        self.threads = threads

    def budget_kind(self) -> str:
        """The mean latent divergence (``latent-kl`` ...): never a distortion budget."""
        return f"latent-{self.divergence}"

    def refusal(self, task: Task) -> str | None:
        """The declarations' refusal, or: ``formulation="utility"`` on a task without utility labels."""
        why = super().refusal(task)
        if why is None and self.formulation == "utility" and not task.utility:
            why = "trains a utility classifier (formulation='utility'), but the task declares no utility labels"
        return why

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """Hyper-parameters after the schedule's defaults (validated)."""
        check_choice("schedule", self.schedule, tuple(SCHEDULES))
        check_choice("divergence", self.divergence, DIVERGENCES)
        check_choice("formulation", self.formulation, FORMULATIONS)
        hp = dict(SCHEDULES[self.schedule])
        for key in self._KEYS:
            if getattr(self, key) is not None:
                hp[key] = getattr(self, key)
        for key in ("latent_dim", "hidden", "batch_size", "adv_hidden", "adv_steps"):
            v = hp[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_HYPER_INT:
                raise InputError(f"{key}={hp[key]!r} must be an integer in [1, {MAX_HYPER_INT}]")
        for key in ("vae_steps", "filter_steps"):
            if isinstance(hp[key], bool) or not isinstance(hp[key], (int, np.integer)) or hp[key] < 0:
                raise InputError(f"{key}={hp[key]!r} must be a non-negative integer")
        for key in ("lr", "gamma", "kappa", "lipschitz", "beta"):
            v = hp[key]
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0) or (key == "lr" and v <= 0):
                raise InputError(f"{key}={v!r} must be a finite number {'> 0' if key == 'lr' else '>= 0'}")
        if not (isinstance(self.penalty, (int, float)) and self.penalty > 0 and math.isfinite(self.penalty)):
            raise InputError(f"penalty={self.penalty!r} must be a positive number")
        if not isinstance(self.share_vae, bool):
            raise InputError(f"share_vae={self.share_vae!r} must be true or false")
        if self.noise_dim is not None and (not isinstance(self.noise_dim, int) or self.noise_dim < 1):
            raise InputError(f"noise_dim={self.noise_dim!r} must be a positive integer or None")
        return hp

    # --- public two-step API ---------------------------------------------
    def fit_autoencoder(self, samples: Samples, task: Task, seed: int = 0, device: str = "auto") -> Autoencoder:
        """Step 1: train the VAE on U (S is not used)."""
        samples = self._check(samples, task, seed)
        dev = resolve_device(device, self.prefers_gpu(task))
        with torch_threads(self.threads if dev.type == "cpu" else None):
            return train_autoencoder(samples, task, self.resolved(task, len(samples)), seed, dev)

    def fit_filter(self, autoencoder: Autoencoder, samples: Samples, task: Task, budget: Any, seed: int = 0,
                   device: str = "auto") -> Mechanism | list[Mechanism]:
        """Step 2: train filters (one per budget) on ``samples`` with a frozen autoencoder."""
        samples = self._check(samples, task, seed)
        if not isinstance(autoencoder, Autoencoder) or autoencoder.config.get("d_u") != task.d_u \
                or autoencoder.config.get("kind") != task.kind:
            raise InputError(f"autoencoder does not match this {task.kind} task with d_u={task.d_u}")
        many = not np.isscalar(budget)
        budgets = check_budgets(budget if many else [budget])
        dev = resolve_device(device, self.prefers_gpu(task))
        with torch_threads(self.threads if dev.type == "cpu" else None):
            mechs = self._train_filters([autoencoder], [samples], task, budgets, self.resolved(task, len(samples)),
                                        [seed], dev)[0]
        for m in mechs:
            m.check_finite_state()
            m.info.setdefault("learner", self.name)
        return mechs if many else mechs[0]

    def fit_users(self, samples: Samples, task: Task, budget: Any, user_ids: Any, seed: int = 0,
                  device: str = "auto") -> dict[Any, Mechanism | list[Mechanism]]:
        """The VAE once on all samples, then one filter per user on that user's rows only (§6.7.5).

        Parameters
        ----------
        user_ids : array_like, shape (n,)
            The owner of each row of ``samples``.

        Returns
        -------
        dict user -> Mechanism (or list of them for a list of budgets), users in sorted order.
        """
        ids = np.asarray(user_ids)
        if ids.ndim != 1 or len(ids) != len(samples):
            raise InputError(f"user_ids must have shape ({len(samples)},), got {ids.shape}")
        users = np.unique(ids)
        for user in users:
            if np.sum(ids == user) < 2:
                raise InputError(f"user {user!r} has fewer than 2 samples (a filter needs at least 2)")
        seed_ae, *seed_users = seeds(int(self._check_seed(seed)), 1 + len(users))
        ae = self.fit_autoencoder(samples, task, seed_ae % 2**31, device)
        out: dict[Any, Mechanism | list[Mechanism]] = {}
        for user, s_u in zip(users, seed_users):
            rows = ids == user
            part = samples.take(rows)
            out[user.item() if hasattr(user, "item") else user] = self.fit_filter(ae, part, task, budget,
                                                                                  s_u % 2**31, device)
        return out

    # --- Learner API ------------------------------------------------------
    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        hp = self.resolved(task, len(samples))
        seed_ae, seed_f = seeds(seed, 2)
        with torch_threads(self.threads if device.type == "cpu" else None):
            ae = fit_autoencoder_for(samples, task, hp, seed_ae, device, self.share_vae)
            return self._train_filters([ae], [samples], task, budgets, hp, [seed_f], device)[0]

    def _fit_many(self, samples_list: list[Samples], task: Task, budgets: np.ndarray, seeds_list: list[int],
                  device: Any) -> list[list[Mechanism]]:
        """Each set's VAE as in its own fit, then every set's filters as one sweep (:class:`FilterSets`)."""
        hp = self.resolved(task, len(samples_list[0]))
        pairs = [seeds(sd, 2) for sd in seeds_list]
        with torch_threads(self.threads if device.type == "cpu" else None):
            aes = [fit_autoencoder_for(s, task, hp, p[0], device, self.share_vae) for s, p in zip(samples_list, pairs)]
            return self._train_filters(aes, samples_list, task, budgets, hp, [p[1] for p in pairs], device)

    # --- internals --------------------------------------------------------
    @staticmethod
    def _check_seed(seed: Any) -> int:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"seed={seed!r} must be a non-negative integer")
        return int(seed)

    def _check(self, samples: Samples, task: Task, seed: Any) -> Samples:
        if not isinstance(task, Task):
            raise InputError(f"task must be a privbench Task, got {type(task).__name__}")
        if not self.supports(task):
            raise InputError(f"learner {self.name!r} does not serve a {task.kind} task with observation="
                             f"{task.observation}, privacy={task.privacy}")
        self._check_seed(seed)
        return task.check_samples(samples)

    def _filter_config(self, ae: Autoencoder, samples: Samples, task: Task) -> tuple[dict[str, Any], bool, np.ndarray]:
        """(mechanism config, whether S is a label, the filter's S features (n, d_f))."""
        cfg = dict(ae.config)
        n, d_z = len(samples), cfg["latent_dim"]
        d_n = int(self.noise_dim or d_z)
        label = task.kind in ("mixture", "image")
        feature = "none" if task.observation == "useful" else ("onehot" if label else "raw")
        cfg.update(noise_dim=d_n, feature=feature, sample_posterior=bool(self.sample_posterior),
                   divergence=self.divergence)
        if feature == "raw":
            sa = np.asarray(samples.s, dtype=float).reshape(n, -1)
            cfg["s_mean"], cfg["s_std"] = sa.mean(0).tolist(), np.maximum(sa.std(0), 1e-9).tolist()
        probe = LatentFilterMechanism(task, 0.0, {**cfg}, {**ae.tensors, "gamma": torch.zeros(d_z, d_n)})
        return cfg, label, probe.features(task.observe(samples))

    def _utility_term(self, hp: dict[str, Any], sets: FilterSets, nu: UtilityHeads | None,
                      samples_list: list[Samples], task: Task, device: torch.device) -> Any:
        """The filter's utility loss for rows idx (R, b), ``term(zt, idx) -> (R k,)``: the decoded release's
        distortion (``distortion``), or the loss of utility classifiers nu on z~ (``utility``, eq 15:
        FC(adv_hidden)-ELU-FC(u) as the adversary; each call first takes one step of nu on the
        detached z~, then returns nu's loss for the filter to minimise)."""
        if nu is None:
            return lambda zt, idx: utility_loss(sets.decode(zt), sets.rows(sets.ut, idx), sets.cfg)
        per_set = [utility_targets(s.utility, task.utility_classes, device) for s in samples_list]
        targets = {name: torch.stack([t[name] for t in per_set]) for name in per_set[0]}
        opt = adam(list(nu.parameters()), hp["lr"])

        def term(zt: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
            batch = {name: sets.rows(y, idx) for name, y in targets.items()}
            opt.zero_grad()
            nu.loss(zt.detach(), batch).sum().backward()
            opt.step()
            return nu.loss(zt, batch)

        return term

    def _train_filters(self, aes: list[Autoencoder], samples_list: list[Samples], task: Task, budgets: np.ndarray,
                       hp: dict[str, Any], seed_list: list[int], device: torch.device) -> list[list[Mechanism]]:
        """Train the filters of R training sets (each with its VAE and seed) as one sweep; R lists of k mechanisms."""
        configs = [self._filter_config(ae, s, task) for ae, s in zip(aes, samples_list)]
        cfg, label, feats = configs[0]
        k, d_z, d_n, d_f = len(budgets), cfg["latent_dim"], cfg["noise_dim"], feats.shape[1]
        parts = [latent_tensors(ae, s, f, label, device) for ae, s, (_, _, f) in zip(aes, samples_list, configs)]
        sets = FilterSets(parts, [c for c, _, _ in configs], k)
        sd = [seeds(sd_, 3) for sd_ in seed_list]
        rngs, ngens = [np.random.default_rng(s[1]) for s in sd], [generator(s[2], device) for s in sd]
        n_out = task.n_s if label else task.d_s
        gamma, adv, nu = start_sweep(hp, task, k, (d_z, d_n, d_f), n_out, [s[0] for s in sd],
                                     self.formulation == "utility", device)
        opt_f = adam([gamma], hp["lr"])
        opt_a = adam(list(adv.parameters()), hp["lr"])
        bud = torch.as_tensor(np.tile(budgets, len(aes)), dtype=torch.float32, device=device)
        bs, steps = min(hp["batch_size"], sets.n), hp["filter_steps"]
        utility_term = self._utility_term(hp, sets, nu, samples_list, task, device)
        for step in range(steps):
            idx, z, inp = sets.draw(rngs, ngens, bs, d_n, self.sample_posterior)
            zt = z + inp @ gamma.transpose(1, 2)
            s_b = sets.rows(sets.st, idx)
            for _ in range(hp["adv_steps"]):
                la = adversary_loss(adv(zt.detach()), s_b, label, n_out)
                check_loss(la, step, "adversary loss")
                opt_a.zero_grad()
                la.sum().backward()
                opt_a.step()
            priv = -adversary_loss(adv(zt), s_b, label, n_out)
            div = filter_divergence(self.divergence, gamma, sets.rows(sets.var, idx), sets.rows(sets.ft, idx), d_n, d_f)
            lam = max(self.penalty / 2 ** int(2 * step >= steps), 2.0)
            loss = priv + lam * (torch.relu(div - bud) + torch.relu(div - bud) ** 2)
            if hp["beta"] > 0:
                loss = loss + hp["beta"] * utility_term(zt, idx)
            check_loss(loss, step, "filter objective (15)-(17)")
            opt_f.zero_grad()
            loss.sum().backward()
            opt_f.step()
        return [self._finish(aes[r], cfg_r, sets, r, gamma.detach()[r * k:(r + 1) * k], adv, task, budgets, hp, sd[r][2],
                             device) for r, (cfg_r, _, _) in enumerate(configs)]

    def _finish(self, ae: Autoencoder, cfg: dict[str, Any], sets: FilterSets, r: int, gamma: torch.Tensor, adv: SweepMLP,
                task: Task, budgets: np.ndarray, hp: dict[str, Any], n_seed: int, device: torch.device) -> list[Mechanism]:
        """Set r's filters projected onto their budgets, read by its final adversary: its k mechanisms."""
        k, d_n, d_f = len(budgets), cfg["noise_dim"], sets.ft.shape[2]
        label, n_out = task.kind in ("mixture", "image"), adv.net[-1].d_out
        adv_r = adv if sets.r == 1 else member_block(adv, SweepMLP(k, [sets.d_z, hp["adv_hidden"], n_out], "elu"), r, k)
        bud = torch.as_tensor(budgets, dtype=torch.float32, device=device)

        def divergence(g: torch.Tensor, var_b: torch.Tensor, f_b: torch.Tensor) -> torch.Tensor:
            return filter_divergence(self.divergence, g, var_b, f_b, d_n, d_f)

        with torch.no_grad():
            g, t, final = project_filters(gamma, divergence, sets.var[r], sets.ft[r], bud)
            adversary = final_adversary(adv_r.to(device), g, sets.mu[r], sets.var[r], sets.ft[r], sets.st[r], label,
                                        n_out, d_n, generator(n_seed ^ 2, device), self.sample_posterior)
        mechs: list[Mechanism] = []
        for i in range(k):
            info = {**ae.info, "filter_steps": hp["filter_steps"], "divergence": self.divergence,
                    "formulation": self.formulation, "budget_kind": self.budget_kind(),
                    "training_adversary": adversary[i],
                    "train_divergence": float(final[i]), "projection": float(t[i]),
                    "budget_meaning": f"mean latent {self.divergence} divergence (not a distortion budget)"}
            mechs.append(LatentFilterMechanism(task, float(budgets[i]), cfg,
                                               {**ae.tensors, "gamma": g[i].cpu().float()}, info))
        return mechs
