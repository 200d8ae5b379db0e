"""Up-front memory estimates of the finite programs: oversize programs are refused.

A program over channels P(Z|W) has n_w * n_z unknowns. Before anything of that
size is allocated (the joint, the kernel, the solver's matrices), the peak
memory of each solver is estimated from the alphabet sizes alone and compared
with :data:`MEMORY_LIMIT_BYTES` (2 GiB; the environment variable
``PRIVBENCH_FINITE_MEMORY_LIMIT`` sets another number of bytes). A program
over the limit raises :class:`~privbench.datasets.errors.InputError` naming
its size and the limit, instantly.

The per-unknown byte counts were measured (peak resident memory, m = 30..100
symmetric pair): the first-order solver keeps about a dozen dense
(n_w, n_z) float arrays; HiGHS holds the LP's sparse matrix (three nonzeros
per unknown plus one per (s, w, z) with P(s, w) > 0) several times over; the
cvxpy programs build a coefficient matrix with one nonzero per (s, w, z) and
per (u, w, z) and densify the observation kernel.
"""

from __future__ import annotations

import os

from privbench.datasets.errors import InputError

__all__ = ["MEMORY_LIMIT_BYTES", "check_program_size", "estimate_bytes", "memory_limit"]

MEMORY_LIMIT_BYTES = 2 * 2**30
_BYTES_PER_UNKNOWN = {"first-order": 160, "highs": 400}


def memory_limit() -> int:
    """The limit in bytes: ``PRIVBENCH_FINITE_MEMORY_LIMIT`` if set, else :data:`MEMORY_LIMIT_BYTES`."""
    raw = os.environ.get("PRIVBENCH_FINITE_MEMORY_LIMIT")
    if raw is None:
        return MEMORY_LIMIT_BYTES
    try:
        value = int(float(raw))
    except ValueError:
        raise InputError(f"PRIVBENCH_FINITE_MEMORY_LIMIT={raw!r} is not a number of bytes") from None
    if value <= 0:
        raise InputError(f"PRIVBENCH_FINITE_MEMORY_LIMIT={raw!r} must be a positive number of bytes")
    return value


def estimate_bytes(n_s: int, n_u: int, n_w: int, n_z: int, solver: str) -> int:
    """Peak memory estimate of one solve, in bytes.

    Parameters
    ----------
    n_s, n_u, n_w, n_z : int
        Alphabet sizes of S, U, the observation W and the release Z.
    solver : {"first-order", "highs", "cvxpy"}
    """
    unknowns = n_w * n_z
    base = 8 * n_s * n_u * 4  # the joint and its marginals
    if solver == "cvxpy":
        # dense kernel (n_s n_u x n_w) and a coefficient matrix with (n_s + n_u) nonzeros
        # per unknown (value, row, column indices, kept by cvxpy and the solver)
        return base + 8 * n_s * n_u * n_w + 48 * (n_s + n_u + 4) * unknowns
    return base + _BYTES_PER_UNKNOWN[solver] * unknowns


def check_program_size(n_s: int, n_u: int, n_w: int, n_z: int, solver: str, what: str) -> int:
    """Raise InputError if :func:`estimate_bytes` exceeds :func:`memory_limit`; return the estimate.

    ``what`` names the program in the message (e.g. ``"symmetric-pair-m100000-p0.4 mi/full"``).
    """
    need = estimate_bytes(n_s, n_u, n_w, n_z, solver)
    limit = memory_limit()
    if need > limit:
        raise InputError(
            f"{what}: the finite program has |W| x |Z| = {n_w} x {n_z} = {n_w * n_z:.3g} unknowns, "
            f"about {need / 2**30:.3g} GiB with the {solver} solver, over the limit of "
            f"{limit / 2**30:.3g} GiB (PRIVBENCH_FINITE_MEMORY_LIMIT, bytes)"
        )
    return need
