"""``ppan-image``'s own adversary trained to convergence against the final release.

At the end of the game the adversary has only followed a moving mechanism (``adv_steps``
updates per mechanism step): against the final mechanism it is not converged, and its accuracy
under-read what the bench's fresh classifier finds by 0.03-0.29 on the MNIST subset (a mechanism
trained on E log Q(S | Z) also learns releases that the current adversary reads confidently
wrong).  Here the mechanism is frozen, at its calibrated release (:mod:`..image_calibration`:
Y = (1 - a) Z + a U), and a NEW adversary of the game's architecture (seeded initialisation, not
the game's: warm-started from the game's, it stayed where the mechanism had fooled it, reading
0.19-0.32 digit accuracy at budget 0.28 where the bench's fresh classifier read 0.72-0.76) trains
on releases of the game's adversary's training rows (fresh noise in every batch; ``REFIT["passes"]`` passes
over them per epoch, as the bench's classifier trains on four releases of every row) as the bench's
classifier trains: Adam at the game's ``adv_lr`` on mini-batches of ``REFIT["batch_size"]``, early stopping on
the summed cross-entropy of a fixed release of ``REFIT["stop_fraction"]`` of those rows
(patience ``REFIT["patience"]`` epochs, at most ``adversary_epochs``), each member of the sweep on
its own.  Its accuracy and cross-entropy are then read on one release of the rows it never
trained on (the game's held rows, ``ADV_HOLD`` of the training set), as before.  The
mechanism's weights are not touched: only what the learner claims about its release changes.

Two adversaries, as the bench's fresh classifier has two networks (bench/evaluators/classifier.py,
4d5364f): the one above on per-pixel standardised releases, and a second of the same architecture on
WHITENED releases (standardised as above, then multiplied by V diag(1 / sqrt(e)) V^T of their
covariance, each eigenvalue floored at ``REFIT["eig_floor"]`` times the median one, from one release of
the training rows; its own seeds for initialisation, batch order and release noise).  A release that
carries the digit in quiet directions behind loud ones leaves the standardised network badly
conditioned: on the paper suite's ppan-image at budget 0.28 the fresh classifier's standardised network
read 0.788 and the whitened one 0.883.  Each member's claim is read from the whitened adversary only
where its cross-entropy on the standardised adversary's stopping release is lower by more than
``REFIT["significant"]`` standard errors of the paired per-row difference (the bench's rule), so a
member whose standardised adversary is chosen claims bit for bit what it claimed before.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .core import check_loss, generator, init_module, seeds
from .image_game import ImageAdversary, floored_scale

#: the refit's stopping rule and batch size (the bench's fresh classifier's, bench/evaluators/classifier.py:
#: patience 10 epochs, at most 200 with the learner's default ``adversary_epochs``, batches of 128, each pixel's deviation
#: floored at 0.1 x the median varying pixel's: on a discriminator member whose refit stopped at its initial
#: weights (9 of 25 in the paper suite did), 59 pixels vary by 1e-6 to 0.0017 and a batch's statistics standardised
#: another batch's values to 4e5, floored to 58); its
#: learning rate is the game's adversary's (``adv_lr``)
#: ``passes``: an epoch is this many passes over the training rows, each batch with fresh release noise, as
#: the bench's classifier of a randomised release trains on four releases of every row per epoch (496b243;
#: with one pass per epoch the refit stopped earlier and claimed 0.05 / 0.10 less digit accuracy than the
#: bench's classifier read at budgets 0.26 / 0.28, mean over the paper suite's 5 seeds)
#: ``eig_floor``, ``significant``: the whitened adversary's eigenvalue floor and the rule that picks it (the
#: bench's ``CLASSIFIER["eig_floor"]`` and ``SIGNIFICANT``); ``whiten_max_dim``: no whitened adversary above it
REFIT = {"patience": 10, "stop_fraction": 0.15, "batch_size": 128, "sd_floor": 0.1, "passes": 4,
         "eig_floor": 3.0, "significant": 2.0, "whiten_max_dim": 4096}


def fresh_adversary(game: Any, seed: int) -> None:
    """Replace ``game.adv`` by a newly initialised adversary of the same architecture (seeded)."""
    cfg, task = game.cfg, game.task
    adv = ImageAdversary(game.k, task.d_u, cfg["adv_hidden"], task.n_s, cfg["adv_activation"], cfg["adv_standardise"])
    adv.sd_floor = float(REFIT["sd_floor"])
    game.adv = init_module(adv, generator(seed)).to(next(game.adv.parameters()).device)


def converge_adversary(game: Any, W: torch.Tensor, U: torch.Tensor, S: torch.Tensor, fit: np.ndarray,
                       blends: Sequence[float], seed: int, max_epochs: int,
                       anchors: Sequence[Any] | None = None) -> dict[str, list[Any]]:
    """Train a new ``game.adv`` to convergence against the frozen, calibrated release; see the module docstring.

    Parameters
    ----------
    game : ImageGame
        The trained game (its adversary is replaced by the refit one; its mechanism only released).
    W, U, S : tensors on the game's device
        The training rows: observation, image, label.
    fit : ndarray of bool, shape (n,)
        The rows the adversary trained on during the game (the others are held out).
    blends : sequence of float, length k
        Each member's calibration blend a (0: as trained).
    seed : int
        Seeds the new adversaries, the stopping split, the batch order and the release noise.
    max_epochs : int
        At most this many epochs (the early stopping usually ends sooner).
    anchors : sequence of (d_u,) arrays or None, length k, optional
        The fixed image each member's blend goes towards (None: its image U; see :mod:`..image_calibration`).

    Returns
    -------
    dict
        Per member: ``accuracy_held`` and ``xent_held`` (on the held rows), ``accuracy_fit``
        (on the rows it trained on), ``epochs`` (the epoch of its best stopping loss) and ``input``
        (``standardised`` or ``whitened``: the adversary the claim is read from).
    """
    s_noise, s_order, s_init, s_white, s_white_noise = seeds(seed, 5)
    order = np.random.default_rng(s_order)
    fit_rows, held_rows = np.flatnonzero(fit), np.flatnonzero(~fit)
    shuffled = order.permutation(fit_rows)
    n_stop = max(1, int(round(REFIT["stop_fraction"] * len(shuffled))))
    stop_rows, train_rows = shuffled[:n_stop], shuffled[n_stop:]
    release = frozen_release(game, W, U, blends, generator(s_noise, W.device), anchors)
    z_stop, s_stop = release(stop_rows), S[torch.as_tensor(stop_rows, device=S.device)]
    fresh_adversary(game, s_init)
    game.adv.observe(release(train_rows))  # the fresh adversary's standardisation starts at the training releases
    epochs = train_refit(game, release, S, train_rows, z_stop, s_stop, order, max_epochs)
    chosen = torch.zeros(game.k, dtype=torch.bool)
    if 0 < game.task.d_u <= REFIT["whiten_max_dim"]:  # the releases' dimension
        standardised = game.adv
        release_w = frozen_release(game, W, U, blends, generator(s_white_noise, W.device), anchors)
        order_w = np.random.default_rng([s_white, 1])
        game.adv = whitened_adversary(game, release_w(train_rows), s_white)
        z_stop_w = release_w(stop_rows)
        epochs_w = train_refit(game, release_w, S, train_rows, z_stop_w, s_stop, order_w, max_epochs)
        chosen = whitened_wins(rows_xent(standardised, game, z_stop, s_stop), rows_xent(game.adv, game, z_stop, s_stop))
        game.adv = PerMember(standardised, game.adv, chosen)
        epochs = torch.where(chosen, epochs_w, epochs)
    out = read_out(game, release, S, fit_rows, held_rows, epochs)
    out["input"] = ["whitened" if c else "standardised" for c in chosen.tolist()]
    return out


def frozen_release(game: Any, W: torch.Tensor, U: torch.Tensor, blends: Sequence[float], g: torch.Generator,
                   anchors: Sequence[Any] | None = None) -> Any:
    """``release(rows)``: every member's calibrated release (k, len(rows), d_u) of rows ``rows``, noise from
    ``g``: (1 - a) Z + a T, T the member's anchor or (None) the image."""
    k, n_noise = game.k, game.cfg["n_noise"]
    a = torch.as_tensor(np.asarray(blends, dtype=float), dtype=U.dtype, device=U.device).view(k, 1, 1)
    anchors = [None] * k if anchors is None else list(anchors)
    fixed = torch.as_tensor([x is not None for x in anchors], device=U.device).view(k, 1, 1)
    anchor = torch.stack([torch.zeros(U.shape[1], dtype=U.dtype) if x is None
                          else torch.as_tensor(np.asarray(x, dtype=float), dtype=U.dtype) for x in anchors])
    anchor = anchor.to(U.device).view(k, 1, -1)

    @torch.no_grad()
    def release(rows: np.ndarray) -> torch.Tensor:
        idx = torch.as_tensor(rows, device=W.device)
        noise = torch.rand(k, len(rows), n_noise, generator=g, device=W.device) * 2 - 1
        z, _ = game.release(W[idx], U[idx], noise)
        return (1 - a) * z + a * torch.where(fixed, anchor, U[idx])

    return release


def train_refit(game: Any, release: Any, S: torch.Tensor, train_rows: np.ndarray, z_stop: torch.Tensor,
                s_stop: torch.Tensor, order: np.random.Generator, max_epochs: int) -> torch.Tensor:
    """Train ``game.adv`` on releases of ``train_rows`` (``REFIT["passes"]`` passes an epoch, fresh noise
    in every batch), each member early-stopped on its summed cross-entropy on ``z_stop``; leaves each
    member at its best epoch and returns those epochs (k,)."""
    opt = torch.optim.Adam(game.adv.parameters(), lr=float(game.cfg["adv_lr"]))
    best = xent_per_member(game, z_stop, s_stop)
    best_state = {name: t.detach().clone() for name, t in game.adv.state_dict().items()}
    since = torch.zeros(game.k, dtype=torch.long)
    best_epoch = torch.zeros(game.k, dtype=torch.long)
    bs = int(REFIT["batch_size"])
    for epoch in range(int(max_epochs)):
        if bool((since >= REFIT["patience"]).all()):
            break
        rows = np.concatenate([order.permutation(train_rows) for _ in range(int(REFIT["passes"]))])
        for j in range(0, len(rows), bs):
            z = release(rows[j:j + bs])
            game.adv.observe(z)
            loss = game.adv_xent(z, S[torch.as_tensor(rows[j:j + bs], device=S.device)]).sum()
            check_loss(loss, epoch, "adversary refit loss")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        x = xent_per_member(game, z_stop, s_stop)
        better = (x < best).cpu()
        keep_best(best_state, game.adv.state_dict(), better)
        best = torch.where(better.to(best.device), x, best)
        since = torch.where(better, torch.zeros_like(since), since + 1)
        best_epoch = torch.where(better, torch.full_like(best_epoch, epoch + 1), best_epoch)
    game.adv.load_state_dict(best_state)
    return best_epoch


class WhitenedAdversary(nn.Module):
    """An adversary on whitened releases: ``inner(((z - mean) / scale) @ wm)``, per member (buffers (k, 1, d),
    (k, 1, d), (k, d, d) fixed from one release of the training rows; see :func:`whitened_adversary`)."""

    def __init__(self, inner: nn.Module, mean: torch.Tensor, scale: torch.Tensor, wm: torch.Tensor) -> None:
        super().__init__()
        self.inner = inner
        self.register_buffer("mean", mean)
        self.register_buffer("scale", scale)
        self.register_buffer("wm", wm)

    def observe(self, z: torch.Tensor) -> None:
        """Nothing: the whitening is fixed."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.inner(torch.bmm((z - self.mean) / self.scale, self.wm))


class PerMember(nn.Module):
    """Member i's logits from ``b`` where ``chosen[i]``, else from ``a``."""

    def __init__(self, a: nn.Module, b: nn.Module, chosen: torch.Tensor) -> None:
        super().__init__()
        self.a, self.b, self.chosen = a, b, chosen

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        la = self.a(z)
        if not bool(self.chosen.any()):
            return la
        return torch.where(self.chosen.view(-1, 1, 1).to(la.device), self.b(z), la)


@torch.no_grad()
def whitened_adversary(game: Any, z: torch.Tensor, seed: int) -> WhitenedAdversary:
    """A new adversary of the game's architecture (seeded) on releases whitened by their covariance on ``z``
    (k, n, d): each pixel standardised (deviation floored at ``REFIT["sd_floor"]`` times the median varying
    pixel's; a pixel that does not vary left unscaled), then V diag(1 / sqrt(e)) V^T with each eigenvalue
    floored at ``REFIT["eig_floor"]`` times the member's median one (the bench's rule)."""
    cfg, task = game.cfg, game.task
    inner = ImageAdversary(game.k, task.d_u, cfg["adv_hidden"], task.n_s, cfg["adv_activation"], False)
    inner = init_module(inner, generator(seed)).to(z.device)
    x = z.double()
    mean = x.mean(1, keepdim=True)
    scale = floored_scale(x.std(1, unbiased=False, keepdim=True), float(REFIT["sd_floor"]))
    f = (x - mean) / scale
    e, v = torch.linalg.eigh(f.transpose(1, 2) @ f / max(x.shape[1] - 1, 1))
    floor = REFIT["eig_floor"] * e.median(dim=-1, keepdim=True).values.clamp_min(1e-12)
    wm = (v / torch.maximum(e, floor).sqrt().unsqueeze(1)) @ v.transpose(1, 2)
    return WhitenedAdversary(inner, mean.to(z.dtype), scale.to(z.dtype), wm.to(z.dtype))


@torch.no_grad()
def rows_xent(adv: nn.Module, game: Any, z: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Each member's cross-entropy of ``adv`` on every release of ``z`` (k, b, d_u), (k, b)."""
    return F.cross_entropy(adv(z).reshape(-1, game.task.n_s), s.repeat(game.k), reduction="none").view(game.k, -1)


def whitened_wins(x_std: torch.Tensor, x_white: torch.Tensor) -> torch.Tensor:
    """Per member (k,), bool: the whitened adversary's per-row cross-entropy ``x_white`` (k, b) is lower than
    the standardised one's ``x_std`` by more than ``REFIT["significant"]`` standard errors of the paired
    difference (the bench's :func:`chosen_input` rule)."""
    d = (x_std - x_white).double().cpu()
    if d.shape[1] < 2:
        return torch.zeros(d.shape[0], dtype=torch.bool)
    se = d.std(dim=1, unbiased=True) / math.sqrt(d.shape[1])
    return torch.isfinite(d).all(dim=1) & (d.mean(dim=1) > REFIT["significant"] * se)


@torch.no_grad()
def xent_per_member(game: Any, z: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Each member's summed cross-entropy of its adversary on the releases ``z`` (k, b, d_u), (k,)."""
    return rows_xent(game.adv, game, z, s).sum(1)


@torch.no_grad()
def keep_best(best: dict[str, torch.Tensor], now: dict[str, torch.Tensor], better: torch.Tensor) -> None:
    """Copy the members flagged in ``better`` (k,) of every tensor of ``now`` into ``best``."""
    idx = better.nonzero().flatten()
    if len(idx):
        for name, t in now.items():
            best[name][idx.to(t.device)] = t[idx.to(t.device)].detach()


@torch.no_grad()
def read_out(game: Any, release: Any, S: torch.Tensor, fit_rows: np.ndarray, held_rows: np.ndarray,
             best_epoch: torch.Tensor) -> dict[str, list[float]]:
    """Accuracy and cross-entropy of the converged adversary on one release of the held rows, and its
    accuracy on the rows it trained on (chunks of 1,000 rows)."""
    out: dict[str, list[float]] = {"epochs": [float(e) for e in best_epoch.tolist()]}
    for name, rows in (("held", held_rows), ("fit", fit_rows)):
        hits = torch.zeros(game.k)
        xent = torch.zeros(game.k)
        for a in range(0, len(rows), 1000):
            part = rows[a:a + 1000]
            s = S[torch.as_tensor(part, device=S.device)]
            z = release(part)
            hits += (game.adv(z).argmax(-1) == s[None]).float().sum(1).cpu()
            xent += xent_per_member(game, z, s).cpu()
        m = max(len(rows), 1)
        out[f"accuracy_{name}"] = (hits / m).tolist()
        out[f"xent_{name}"] = (xent / m).tolist()
    return out


def converged_claim(ta: dict[str, Any], own: dict[str, list[Any]], i: int) -> dict[str, Any]:
    """Member ``i``'s ``training_adversary`` claim ``ta`` (as the game left it) replaced by the converged
    adversary's, the game's own kept under ``end_of_game``."""
    h_s = ta["h_s"]
    keep = ("accuracy", "accuracy_fit_rows", "mi", "note")
    return {**{k: v for k, v in ta.items() if k not in keep + ("calibrated",)},
            "accuracy": own["accuracy_held"][i], "accuracy_fit_rows": own["accuracy_fit"][i],
            "mi": h_s - own["xent_held"][i], "refit_epochs": own["epochs"][i], "calibrated": True,
            **({"refit_input": own["input"][i]} if "input" in own else {}),
            "end_of_game": {k: ta[k] for k in keep if k in ta},
            "note": "the game's final adversary trained on to convergence against the frozen, calibrated "
                    "release (early stopping, learners/nn/image_refit.py; of two adversaries, on standardised "
                    "and on whitened releases, the one refit_input names): accuracy and mi (H(S) minus its "
                    "cross-entropy) on the n_held training rows it never trained on (the mechanism did), "
                    "accuracy_fit_rows on the others; H(S) the plug-in entropy of the training labels"}
