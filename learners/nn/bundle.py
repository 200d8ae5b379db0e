"""Several training sets trained as one batched sweep: the members of each set, and their random streams.

A sweep trains ``k`` members as one network (:mod:`.sweep`).  A *bundle* puts the sweeps of
several training sets (a case's repetitions) into one such network: set ``r`` owns a block of
``counts[r]`` contiguous members and every random draw of that block comes from the set's own
generator (:class:`Streams`), in the order a sweep of that set alone would draw it.  So member
``i`` of set ``r`` sees the same initialisation, minibatches, noise and data as when set ``r``
is trained alone; only the work is shared (fewer, larger batched operations).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch


class Streams:
    """Random streams of a bundle: block ``j`` (``counts[j]`` contiguous members) draws from ``gens[j]``.

    Each draw of shape ``(k, ...)`` is the concatenation of the blocks' own draws of shape
    ``(counts[j], ...)``: block ``j`` gets exactly what a sweep of its members alone would.
    """

    def __init__(self, gens: Sequence[torch.Generator], counts: Sequence[int]) -> None:
        self.gens, self.counts = list(gens), [int(c) for c in counts]

    @classmethod
    def of(cls, gen: "torch.Generator | Streams", k: int) -> "Streams":
        """``gen`` itself if it is already a Streams, else one block of ``k`` members drawing from it."""
        return gen if isinstance(gen, Streams) else cls([gen], [k])

    def _blocks(self, draw: Callable[[int, torch.Generator], torch.Tensor]) -> torch.Tensor:
        parts = [draw(c, g) for g, c in zip(self.gens, self.counts)]
        return parts[0] if len(parts) == 1 else torch.cat(parts)

    def randn(self, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
        """Standard normals of ``shape`` (first dimension: members) in ``like``'s dtype and device."""
        rest = tuple(shape[1:])
        return self._blocks(lambda c, g: torch.randn((c, *rest), generator=g, device=like.device, dtype=like.dtype))

    def rand(self, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
        """Uniform [0, 1) draws of ``shape`` (first dimension: members)."""
        rest = tuple(shape[1:])
        return self._blocks(lambda c, g: torch.rand((c, *rest), generator=g, device=like.device, dtype=like.dtype))

    def multinomial(self, probs: torch.Tensor, rows_per_member: int) -> torch.Tensor:
        """One index per row of ``probs`` (k * rows_per_member, m), block by block."""
        out, start = [], 0
        for g, c in zip(self.gens, self.counts):
            out.append(torch.multinomial(probs[start: start + c * rows_per_member], 1, generator=g))
            start += c * rows_per_member
        return out[0] if len(out) == 1 else torch.cat(out)

    def randperm(self, n: int, device: torch.device) -> torch.Tensor:
        """One permutation of range(n) per block, (blocks, n)."""
        return torch.stack([torch.randperm(n, generator=g, device=device) for g in self.gens])


class Bundle:
    """The training sets of a bundle, indexed by member: set ``r``'s data for its ``counts[r]`` members.

    ``datas`` are per-set objects with tensors ``w``, ``u``, ``s`` (rows first) and the same ``n``;
    :meth:`rows` gives each member its own set's rows, shape (k, B, ...).
    """

    def __init__(self, datas: Sequence[Any], counts: Sequence[int]) -> None:
        self.datas, self.counts = list(datas), [int(c) for c in counts]
        if len({d.n for d in self.datas}) != 1:
            raise ValueError("the training sets of a bundle must have the same number of rows")
        self.k = sum(self.counts)
        first = self.datas[0]
        self.n, self.discrete, self.n_out, self.n_mix = first.n, first.discrete, first.n_out, first.n_mix
        self.u_mean = self.per_member(lambda d: d.u_mean[None, None, :])
        self.u_std = self.per_member(lambda d: d.u_std[None, None, :])

    def per_member(self, fn: Callable[[Any], torch.Tensor]) -> torch.Tensor:
        """``fn(data)`` (leading dimension 1) expanded to each set's block and stacked: (k, ...)."""
        parts = [fn(d).expand(c, *fn(d).shape[1:]) for d, c in zip(self.datas, self.counts)]
        return parts[0] if len(parts) == 1 else torch.cat(parts)

    def member_values(self, values: Sequence[Any]) -> list[Any]:
        """One value per set -> one per member."""
        return [v for v, c in zip(values, self.counts) for _ in range(c)]

    def rows(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(w, u, s) of rows ``idx[r]`` of each set r (idx (sets, B), or (B,) for all): (k, B, ...)."""
        pick = (lambda d, r: idx[r]) if idx.dim() == 2 else (lambda d, r: idx)
        parts = [[t[pick(d, r)][None].expand(c, *t[pick(d, r)].shape) for t in (d.w, d.u, d.s)]
                 for r, (d, c) in enumerate(zip(self.datas, self.counts))]
        if len(parts) == 1:
            return parts[0][0], parts[0][1], parts[0][2]
        w, u, s = (torch.cat([p[j] for p in parts]) for j in range(3))
        return w, u, s

    def head(self, m: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(w, u, s) of each set's first ``m`` rows, per member: (k, m, ...)."""
        return self.rows(torch.arange(min(self.n, m), device=self.datas[0].w.device))

    def numpy_rows(self, name: str, m: int) -> list[np.ndarray]:
        """Per member, the first ``m`` rows of its set's numpy array ``name`` (``u_np`` or ``s_np``)."""
        return self.member_values([getattr(d, name)[:m] for d in self.datas])
