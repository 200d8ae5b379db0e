"""An adaptive triangulation of the probability simplex by longest-edge bisection.

Cells are simplices given by n vertex ids (n = dimension of the ambient simplex
plus one); bisecting a cell splits its longest edge (first pair on ties) at the
midpoint, so every vertex is a dyadic rational of the unit vectors and is
deduplicated exactly.  The cells always cover the simplex (hanging vertices are
allowed: a bound built cell by cell only needs every point in some cell).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Triangulation"]


class Triangulation:
    """The simplex {q >= 0, sum q = 1} in R^n, covered by cells.

    Attributes
    ----------
    points : ndarray, shape (n_vertices, n)
    cells : ndarray of int, shape (n_cells, n)
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.points = np.eye(n)
        self._index = {tuple(row): i for i, row in enumerate(self.points)}
        self.cells = np.arange(n)[None, :].copy()
        i, j = np.triu_indices(n, 1)
        self._pairs = (i, j)

    def centres(self, cells: np.ndarray | None = None) -> np.ndarray:
        """Barycentres of the given cells (all by default), shape (k, n)."""
        cells = self.cells if cells is None else cells
        return self.points[cells].mean(axis=1)

    def _vertex(self, q: np.ndarray) -> int:
        key = tuple(q)
        found = self._index.get(key)
        if found is None:
            found = len(self._index)
            self._index[key] = found
            self._new.append(q)
        return found

    def bisect(self, which: np.ndarray) -> np.ndarray:
        """Split the cells ``which`` (ids); returns the ids of the new cells (the split ones are replaced)."""
        which = np.unique(np.asarray(which, dtype=int))
        if which.size == 0 or self.n == 1:
            return np.zeros(0, dtype=int)
        self._new: list[np.ndarray] = []
        i, j = self._pairs
        pts = self.points[self.cells[which]]  # (k, n, n)
        lengths = ((pts[:, i, :] - pts[:, j, :]) ** 2).sum(axis=2)
        edge = np.argmax(lengths, axis=1)  # first longest edge
        a, b = i[edge], j[edge]
        children = []
        for c, ia, ib in zip(which, a, b):
            cell = self.cells[c]
            mid = self._vertex(0.5 * (self.points[cell[ia]] + self.points[cell[ib]]))
            left, right = cell.copy(), cell.copy()
            left[ib], right[ia] = mid, mid
            self.cells[c] = left
            children.append(right)
        if self._new:
            self.points = np.vstack([self.points, np.array(self._new)])
        start = len(self.cells)
        self.cells = np.vstack([self.cells, np.array(children)])
        return np.concatenate([which, np.arange(start, len(self.cells))])

    def refine_all(self, rounds: int) -> None:
        """Bisect every cell ``rounds`` times."""
        for _ in range(rounds):
            self.bisect(np.arange(len(self.cells)))
