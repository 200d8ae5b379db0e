"""Several training sets trained as one batched sweep: the members of each set, and their random streams.

A sweep trains ``k`` members as one network (:mod:`.sweep`).  A *bundle* puts the sweeps of
several training sets (a case's repetitions, and its training-set sizes) into one such network:
set ``r`` owns a block of ``counts[r]`` contiguous members and every random draw of that block
comes from the set's own generator (:class:`Streams`), in the order a sweep of that set alone
would draw it.  So member ``i`` of set ``r`` sees the same initialisation, minibatches, noise and
data as when set ``r`` is trained alone; only the work is shared (fewer, larger batched operations).

Sets may differ in size: minibatches have one size for all, and a per-set pass over the first
rows (:meth:`Bundle.head`) is padded to the longest set's, each block drawing only its own rows'
noise (``Streams(..., rows=...)``); the padding rows are ignored by the callers.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch


class Streams:
    """Random streams of a bundle: block ``j`` (``counts[j]`` contiguous members) draws from ``gens[j]``.

    Each draw of shape ``(k, ...)`` is the concatenation of the blocks' own draws of shape
    ``(counts[j], ...)``: block ``j`` gets exactly what a sweep of its members alone would.  With
    ``rows`` (one count per block), a draw of shape ``(k, n, ...)`` gives block ``j`` its own draw of
    ``(counts[j], rows[j], ...)`` followed by zeros up to ``n`` rows.
    """

    def __init__(self, gens: Sequence[torch.Generator], counts: Sequence[int],
                 rows: Sequence[int] | None = None) -> None:
        self.gens, self.counts = list(gens), [int(c) for c in counts]
        self.rows = None if rows is None else [int(r) for r in rows]

    @classmethod
    def of(cls, gen: "torch.Generator | Streams", k: int) -> "Streams":
        """``gen`` itself if it is already a Streams, else one block of ``k`` members drawing from it."""
        return gen if isinstance(gen, Streams) else cls([gen], [k])

    def with_rows(self, rows: Sequence[int]) -> "Streams":
        """The same generators, each block drawing only its first ``rows[j]`` rows (see the class)."""
        return Streams(self.gens, self.counts, rows)

    def _blocks(self, shape: Sequence[int], draw: Callable[[tuple[int, ...], torch.Generator], torch.Tensor]
                ) -> torch.Tensor:
        rows = self.rows or [None] * len(self.gens)
        parts = []
        for g, c, r in zip(self.gens, self.counts, rows):
            if r is None or len(shape) < 2 or r >= shape[1]:
                parts.append(draw((c, *shape[1:]), g))
                continue
            part = draw((c, r, *shape[2:]), g)
            parts.append(torch.cat([part, part.new_zeros((c, shape[1] - r, *shape[2:]))], 1))
        return parts[0] if len(parts) == 1 else torch.cat(parts)

    def randn(self, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
        """Standard normals of ``shape`` (first dimension: members) in ``like``'s dtype and device."""
        return self._blocks(shape, lambda sh, g: torch.randn(sh, generator=g, device=like.device, dtype=like.dtype))

    def rand(self, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
        """Uniform [0, 1) draws of ``shape`` (first dimension: members)."""
        return self._blocks(shape, lambda sh, g: torch.rand(sh, generator=g, device=like.device, dtype=like.dtype))

    def multinomial(self, probs: torch.Tensor, rows_per_member: int) -> torch.Tensor:
        """One index per row of ``probs`` (k * rows_per_member, m), block by block (with ``rows``, block
        ``j`` draws for its members' first ``rows[j]`` rows only; the others get index 0)."""
        out, start, n, m = [], 0, rows_per_member, probs.shape[-1]
        for j, (g, c) in enumerate(zip(self.gens, self.counts)):
            block = probs[start: start + c * n]
            r = n if self.rows is None else min(self.rows[j], n)
            if r == n:
                out.append(torch.multinomial(block, 1, generator=g))
            else:
                got = torch.multinomial(block.reshape(c, n, m)[:, :r].reshape(c * r, m), 1, generator=g)
                pad = got.new_zeros((c, n - r, 1))
                out.append(torch.cat([got.reshape(c, r, 1), pad], 1).reshape(c * n, 1))
            start += c * n
        return out[0] if len(out) == 1 else torch.cat(out)

    def randperm(self, j: int, n: int, device: torch.device) -> torch.Tensor:
        """A permutation of range(n) from block ``j``'s generator."""
        return torch.randperm(n, generator=self.gens[j], device=device)


class Bundle:
    """The training sets of a bundle, indexed by member: set ``r``'s data for its ``counts[r]`` members.

    ``datas`` are per-set objects with tensors ``w``, ``u``, ``s`` (rows first) and ``n`` rows
    (``ns``, per set); :meth:`rows` gives each member its own set's rows, shape (k, B, ...).
    """

    def __init__(self, datas: Sequence[Any], counts: Sequence[int]) -> None:
        self.datas, self.counts = list(datas), [int(c) for c in counts]
        self.ns = [int(d.n) for d in self.datas]
        self.k = sum(self.counts)
        first = self.datas[0]
        self.discrete, self.n_out, self.n_mix = first.discrete, first.n_out, first.n_mix
        self.u_mean = self.per_member(lambda d: d.u_mean[None, None, :])
        self.u_std = self.per_member(lambda d: d.u_std[None, None, :])
        if len(self.datas) > 1:  # every set's rows in one tensor, so that a minibatch is one gather
            dev = first.w.device
            self.offsets = torch.tensor(np.cumsum([0] + self.ns[:-1]), dtype=torch.long, device=dev)
            self.member_set = torch.repeat_interleave(torch.arange(len(self.datas), device=dev),
                                                      torch.tensor(self.counts, device=dev))
            self.stacked = [torch.cat([getattr(d, name) for d in self.datas]) for name in ("w", "u", "s")]

    def per_member(self, fn: Callable[[Any], torch.Tensor]) -> torch.Tensor:
        """``fn(data)`` (leading dimension 1) expanded to each set's block and stacked: (k, ...)."""
        parts = [fn(d).expand(c, *fn(d).shape[1:]) for d, c in zip(self.datas, self.counts)]
        return parts[0] if len(parts) == 1 else torch.cat(parts)

    def member_values(self, values: Sequence[Any]) -> list[Any]:
        """One value per set -> one per member."""
        return [v for v, c in zip(values, self.counts) for _ in range(c)]

    def rows(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(w, u, s) of rows ``idx[r]`` of each set r (idx (sets, B), or (B,) for all): (k, B, ...)."""
        if len(self.datas) == 1:
            d, c = self.datas[0], self.counts[0]
            pick = idx[0] if idx.dim() == 2 else idx
            w, u, s = (t[pick][None].expand(c, *t[pick].shape) for t in (d.w, d.u, d.s))
            return w, u, s
        both = idx if idx.dim() == 2 else idx[None].expand(len(self.datas), -1)
        flat = (both + self.offsets[:, None]).reshape(-1)
        w, u, s = (t.index_select(0, flat).reshape(len(self.datas), both.shape[1], *t.shape[1:])
                   .index_select(0, self.member_set) for t in self.stacked)
        return w, u, s

    def head_sizes(self, m: int) -> list[int]:
        """Per set, how many of its first rows :meth:`head` gives it: ``min(n, m)``."""
        return [min(n, m) for n in self.ns]

    def head(self, m: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(w, u, s) of each set's first ``min(n, m)`` rows, per member: (k, M, ...), M the longest; a
        shorter set's block repeats its rows cyclically up to M (padding its callers ignore)."""
        sizes = self.head_sizes(m)
        top = max(sizes)
        dev = self.datas[0].w.device
        if len(set(sizes)) == 1:
            return self.rows(torch.arange(top, device=dev))
        return self.rows(torch.stack([torch.arange(top, device=dev) % n for n in sizes]))

    def numpy_rows(self, name: str, m: int) -> list[np.ndarray]:
        """Per member, the first ``m`` rows of its set's numpy array ``name`` (``u_np`` or ``s_np``)."""
        return self.member_values([getattr(d, name)[:m] for d in self.datas])
