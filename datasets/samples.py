"""Training samples and how the mechanism observes them.

privbench vocabulary (see DESIGN.md): ``S`` sensitive, ``U`` useful, ``W``
what the mechanism observes, ``Z`` the release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .errors import InputError

from .vocabulary import OBSERVATIONS


def check_observation(observation: str) -> str:
    """Validate an observation-model name (``useful``: W = U; ``full``: W = (S, U))."""
    if observation not in OBSERVATIONS:
        raise InputError(
            f"observation={observation!r} is unknown (allowed: {', '.join(OBSERVATIONS)})"
        )
    return observation


@dataclass(frozen=True)
class Samples:
    """Paired draws of the sensitive and useful attributes.

    Attributes
    ----------
    s : ndarray, shape (n,) of int for finite alphabets, or (n, d_s) of float
        Sensitive attribute S.
    u : ndarray, shape (n,) of int for finite alphabets, or (n, d_u) of float
        Useful attribute U.
    utility : dict of str -> ndarray of shape (n,), int, or None
        Utility labels beside S (e.g. ``{"circle": ...}`` for the digit images, ``{"u": ...}``
        for the chi-square paper's hypothesis test), named as the task's ``Task.utility``
        declares them; None (the default) when the rows carry none.  Learners that ignore
        utility labels never read it; :meth:`Task.check_samples` validates it.
    """

    s: np.ndarray
    u: np.ndarray
    utility: Mapping[str, np.ndarray] | None = None

    def __post_init__(self) -> None:
        if len(self.s) != len(self.u):
            raise InputError(
                f"samples have {len(self.s)} values of S but {len(self.u)} of U (must match)"
            )
        if self.utility is not None:
            if not isinstance(self.utility, Mapping):
                raise InputError(f"samples utility must be a dict of label name -> labels, "
                                 f"got {type(self.utility).__name__}")
            for name, labels in self.utility.items():
                m = len(np.atleast_1d(np.asarray(labels)))
                if m != len(self.s):
                    raise InputError(f"samples have {len(self.s)} values of S but {m} of utility label "
                                     f"{name!r} (must match)")

    def __len__(self) -> int:
        return len(self.s)

    def take(self, rows: Any) -> "Samples":
        """Rows ``rows`` (an int array or a boolean mask) of S, U and every utility label."""
        idx = np.asarray(rows)
        util = None if self.utility is None else {k: np.asarray(v)[idx] for k, v in self.utility.items()}
        return Samples(np.asarray(self.s)[idx], np.asarray(self.u)[idx], util)

    def observed(self, observation: str, n_u: int | None = None) -> np.ndarray:
        """What the mechanism sees, W.

        For ``useful`` this is ``u``. For ``full`` with finite alphabets
        (``n_u`` given) it is the flat index ``s * n_u + u``; with continuous
        attributes it is the column stack ``[s, u]``, shape (n, d_s + d_u).
        """
        check_observation(observation)
        if observation == "useful":
            return self.u
        if n_u is not None:
            return np.asarray(self.s, dtype=np.int64) * int(n_u) + np.asarray(self.u, dtype=np.int64)
        s = self.s.reshape(len(self.s), -1)
        u = self.u.reshape(len(self.u), -1)
        return np.concatenate([s, u], axis=1)
