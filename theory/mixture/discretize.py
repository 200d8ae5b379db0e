"""The discretised model shared by the achievable program and the relaxation.

:class:`Discretized` holds, for the two classes of a binary Gaussian mixture, the
cells of U and bins of Z (one :class:`~.cells.Grid` each), the exact per-cell
masses and moments, the (cell, bin) pairs kept (those within distance ``radius``;
the rest are "far", see :mod:`.relaxation`) and sparse incidence matrices that
sum pair variables per cell or per bin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from privbench.datasets.scenarios import BinaryGMM

from .cells import Grid, cell_moments, interval_gaps, moment_coupling, ratio_range, ratio_tangents, uniform_edges
from .model import class_components
from .taylor import taylor_coupling

__all__ = ["TANGENT_POINTS", "Discretized", "class_model", "discretize"]

#: Where in each cell (fraction of its width) the relaxation adds Neyman-Pearson tangents (useful only).
TANGENT_POINTS = (0.25, 0.5, 0.75)


def class_model(sc: BinaryGMM) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, means, sds) of classes S = 0, 1: (1-prior) N(-mu, sigma0^2), prior N(mu, sigma1^2)."""
    return (np.array([1 - sc.prior, sc.prior]), np.array([-sc.mu, sc.mu]), np.array([sc.sigma0, sc.sigma1]))


@dataclass
class Discretized:
    """Cells, bins, exact cell facts and the kept (cell, bin) pairs.

    Attributes (n cells, K bins, P kept pairs, classes s = 0, 1)
    ----------
    weights : (2,) P(S = s)
    mass, m1, m2 : (2, n) P(S=s, U in C_j), E[U; S=s, U in C_j], E[U^2; S=s, U in C_j]
    pj, pk : (P,) cell and bin of each kept pair
    gap : (P,) min |z - u| over the pair's cell and bin
    radius : pairs with gap <= radius are kept; a far pair has |Z - U| > radius
    by_cell : (n, P) sparse, sums pair variables per cell; by_bin : (K, P) per bin
    ratio_lo, ratio_hi : (n,) range over each cell of the weighted density ratio
        P(S=1) p1(u) / (P(S=0) p0(u))
    tangents : one :func:`~.cells.ratio_tangents` table per point of TANGENT_POINTS
    coupling : the :func:`~.cells.moment_coupling` table
    taylor : the :func:`~.taylor.taylor_coupling` tables (both directions; empty for K components per class)
    """

    cells: Grid
    bins: Grid
    weights: np.ndarray
    mass: np.ndarray
    m1: np.ndarray
    m2: np.ndarray
    pj: np.ndarray
    pk: np.ndarray
    gap: np.ndarray
    radius: float
    ratio_lo: np.ndarray
    ratio_hi: np.ndarray
    by_cell: sp.csr_matrix = field(repr=False)
    by_bin: sp.csr_matrix = field(repr=False)
    tangents: list[dict[str, np.ndarray]] = field(default_factory=list, repr=False)
    coupling: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    taylor: list[Any] = field(default_factory=list, repr=False)

    @property
    def n_pairs(self) -> int:
        return int(self.pj.size)

    def exact_pair_distortion(self) -> np.ndarray:
        """E[(z_k - U)^2; S = s, U in C_j] for the atom z_k of each pair's bin, shape (2, P)."""
        z = self.bins.atom[self.pk]
        return z[None, :] ** 2 * self.mass[:, self.pj] - 2 * z[None, :] * self.m1[:, self.pj] + self.m2[:, self.pj]


def discretize(sc: Any, cell_step: float, bin_step: float, radius: float,
               tails: float = 6.5, bin_edges: np.ndarray | None = None) -> Discretized:
    """Uniform cells of U of width ``cell_step``, bins of Z of width ``bin_step`` (or the sorted
    ``bin_edges`` given), pairs within ``radius``.  ``sc``: a BinaryGMM or a
    :class:`~.model.ComponentMixture` (K Gaussians per class)."""
    classes = class_components(sc)
    all_means = np.concatenate([m for _, m, _ in classes])
    all_sds = np.concatenate([s for _, _, s in classes])
    cells = Grid(uniform_edges(all_means, all_sds, cell_step, tails))
    bins = Grid(uniform_edges(all_means, all_sds, bin_step, tails) if bin_edges is None else np.asarray(bin_edges))
    mass, m1, m2 = (np.stack([sum(cell_moments(cells, m, s, w)[i] for w, m, s in zip(*cls)) for cls in classes])
                    for i in range(3))
    weights = np.array([float(w.sum()) for w, _, _ in classes])
    gaps = interval_gaps(cells, bins)
    pj, pk = np.nonzero(gaps <= radius)
    n, k, p = len(cells), len(bins), pj.size
    by_cell = sp.csr_matrix((np.ones(p), (pj, np.arange(p))), shape=(n, p))
    by_bin = sp.csr_matrix((np.ones(p), (pk, np.arange(p))), shape=(k, p))
    if any(w.size != 1 for w, _, _ in classes):  # ratio facts need one Gaussian per class: drop them (looser)
        return Discretized(cells, bins, weights, mass, m1, m2, pj, pk, gaps[pj, pk], float(radius),
                           np.zeros(n), np.full(n, np.inf), by_cell, by_bin, [], {})
    means, sds = np.array([m[0] for _, m, _ in classes]), np.array([s[0] for _, _, s in classes])
    rlo, rhi = ratio_range(cells, (means[0], means[1]), (sds[0], sds[1]), float(np.log(weights[1] / weights[0])))
    tangents = [ratio_tangents(cells, weights, means, sds, theta) for theta in TANGENT_POINTS]
    return Discretized(cells, bins, weights, mass, m1, m2, pj, pk, gaps[pj, pk], float(radius),
                       rlo, rhi, by_cell, by_bin, tangents, moment_coupling(cells, weights, means, sds, m1, mass),
                       taylor_coupling(cells, weights, means, sds))
