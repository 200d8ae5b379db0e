"""Labelled tabular data without a known optimum: UCI-Adult and UCI-Abalone (generative-filter paper
Tables 2 and 3).

Like the image sets of :mod:`.labelled`, each is a fixed train / held-out partition
of real rows, run for learned points and fresh-classifier evaluators only (no gap).
The data ship with privbench (:mod:`privbench.datasets.real.uci_files`).  Task kind
``mixture``: S a label, U = W's features as floats, distortion the squared error
summed over U's dimensions.  The task declares the utility label (``Task.utility``:
``(("income", 2),)`` or ``(("rings", 2),)``) and every draw carries it in
``Samples.utility``, for learners that train against a utility classifier (the
latent filter's ``formulation="utility"``, the paper's eq (15)).

==============  ==========================================  ===========================================
scenario        S (sensitive) and utility label             U (what the mechanism sees besides S)
==============  ==========================================  ===========================================
``adult``       S = sex (0 female, 1 male);                 103 features: the 6 numeric columns
                utility ``income`` (1 for > 50K)            standardised (capital gain and loss as
                                                            log(1 + x) first), one-hot blocks of the
                                                            7 categorical ones (``AdultData``)
``abalone``     S = sex: M, F, I (0, 1, 2; ``infants=keep``, 7 measurements standardised
                the paper's three categories) or M, F
                (``infants=drop``); utility ``rings``
                (1 for rings > 10)
==============  ==========================================  ===========================================

Partitions: ``adult`` uses UCI's own split, adult.data (30,162 rows without a
missing value) for training and adult.test (15,060) held out: 45,222 rows, the
paper's count.  ``abalone`` (4,177 rows; 2,835 without infants) has no published
split: a fixed permutation (``default_rng(0)``) holds out 20% (835 rows, 567
without infants).  Standardisation uses the train partition's mean and standard
deviation, for both partitions.  Derived labels: ``sex`` and ``income``
(adult), ``sex`` and ``rings`` (abalone).

The paper's Table 3 private accuracy (0.546 raw, 0.31-0.32 filtered, i.e. about
1/3) is a three-class accuracy: infants are a third sex class there, so
``infants=keep`` is the default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .errors import InputError
from .labelled import PARTS, TEST_FRACTION, SPLIT_SEED, Draw, LabelledScenario
from .samples import Samples
from .scenarios.params import Param
from .scenarios.registry import register_scenario
from .tasks import Task

INFANTS = ("keep", "drop")
#: Adult's numeric columns taken as log(1 + x) before standardising (mostly 0, a few up to 99,999).
LOG_COLUMNS = ("capital-gain", "capital-loss")
RINGS_CUT = 10


@dataclass(frozen=True)
class TableRows:
    """One partition of a table: features U (n, d), float64, and int64 labels (n,) by name."""

    u: np.ndarray
    labels: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.u)


def standardise(train: np.ndarray, held: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays with their first ``columns`` columns rescaled by the train rows' mean and std."""
    mu, sd = train[:, :columns].mean(axis=0), train[:, :columns].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    out = []
    for x in (train, held):
        x = np.array(x, dtype=float, copy=True)
        x[:, :columns] = (x[:, :columns] - mu) / sd
        out.append(x)
    return out[0], out[1]


@functools.lru_cache(maxsize=2)
def adult_partition() -> tuple[TableRows, TableRows]:
    """(train, held-out) of ``adult``: adult.data and adult.test without missing values."""
    from .real.adult import ADULT_NUMERIC
    from .real.uci_files import load_adult

    tr, te = load_adult("train"), load_adult("test")
    x_tr, x_te = np.array(tr.x, copy=True), np.array(te.x, copy=True)
    for col in LOG_COLUMNS:  # capital gain and loss: mostly 0, up to 99,999; log1p before standardising
        j = ADULT_NUMERIC.index(col)
        x_tr[:, j], x_te[:, j] = np.log1p(x_tr[:, j]), np.log1p(x_te[:, j])
    u_tr, u_te = standardise(x_tr, x_te, len(ADULT_NUMERIC))
    return (TableRows(u_tr, {"sex": tr.sex.copy(), "income": tr.income.copy()}),
            TableRows(u_te, {"sex": te.sex.copy(), "income": te.income.copy()}))


@functools.lru_cache(maxsize=2)
def abalone_partition(infants: str) -> tuple[TableRows, TableRows]:
    """(train, held-out) of ``abalone``: a fixed 80/20 split of the kept rows."""
    from .real.uci_files import load_abalone

    data = load_abalone()
    keep = np.ones(len(data), dtype=bool) if infants == "keep" else data.sex != 2
    x, sex, rings = data.x[keep], data.sex[keep], data.rings[keep]
    n = len(x)
    perm = np.random.default_rng(SPLIT_SEED).permutation(n)
    n_test = int(round(n * TEST_FRACTION))
    te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    u_tr, u_te = standardise(x[tr], x[te], x.shape[1])
    util = (rings > RINGS_CUT).astype(np.int64)
    return (TableRows(u_tr, {"sex": sex[tr].copy(), "rings": util[tr].copy()}),
            TableRows(u_te, {"sex": sex[te].copy(), "rings": util[te].copy()}))


class TabularScenario(LabelledScenario):
    """A bundled UCI table with a sensitive label and a utility label (module docstring)."""

    kind: ClassVar[str] = "mixture"
    distortion_name: ClassVar[str] = "mse"
    fixed_rows: ClassVar[bool] = True
    s_label: ClassVar[str] = "sex"  # type: ignore[misc]

    def partition(self) -> tuple[TableRows, TableRows]:  # pragma: no cover
        raise NotImplementedError

    @property
    def n_classes(self) -> dict[str, int]:
        return {"sex": self.n_s, self.utility_label: 2}

    @property
    def n_s(self) -> int:
        return 2

    @property
    def max_n(self) -> int:
        """Rows of the train partition: the largest n :meth:`sample` accepts."""
        return len(self.partition()[0])

    def part_size(self, part: str) -> int:
        return len(self.partition()[PARTS.index(self._check_part(part))])

    def task_for(self, observation: str, privacy: str = "map", distortion: str | None = None) -> Task:
        self.other_distortion(distortion)  # only its own (mse): InputError otherwise
        return Task("mixture", observation, privacy, "mse", n_s=self.n_s, d_u=self.partition()[0].u.shape[1],
                    utility=((self.utility_label, 2),))

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        """n rows drawn without replacement from the train partition."""
        return self.draw("train", n, rng).samples

    def draw(self, part: str, n: int | None, rng: np.random.Generator) -> Draw:
        """n rows of ``part`` without replacement (in random order); ``n=None``: all rows, in order."""
        data = self.partition()[PARTS.index(self._check_part(part))]
        if n is None:
            idx = np.arange(len(data))
        else:
            n = self._check_n(n)
            if n > len(data):
                raise InputError(f"n={n} exceeds the {part} partition of {self.name} (maximum {len(data)} rows)")
            idx = rng.choice(len(data), size=n, replace=False)
        labels = {k: v[idx].copy() for k, v in data.labels.items()}
        util = {self.utility_label: labels[self.utility_label].copy()}
        return Draw(Samples(labels[self.s_label].copy(), data.u[idx].copy(), util), labels, self.n_classes, None)

    def label_prior(self, label: str, part: str = "held-out") -> np.ndarray:
        """Frequencies of ``label`` over the whole partition ``part``, shape (n_classes,)."""
        data = self.partition()[PARTS.index(self._check_part(part))]
        if label not in data.labels:
            raise InputError(f"label={label!r} is unknown (allowed: {', '.join(data.labels)})")
        return np.bincount(data.labels[label], minlength=self.n_classes[label]) / len(data)


@register_scenario
@dataclass(frozen=True)
class Adult(TabularScenario):
    """UCI-Adult: S = sex, utility = income > 50K (generative-filter paper Table 2)."""

    name: ClassVar[str] = "adult"
    summary: ClassVar[str] = ("UCI-Adult (filter paper Table 2): S = sex, utility income > 50K, U = 103 "
                              "standardised / one-hot features; no known optimum; MSE")
    label_names: ClassVar[tuple[str, ...]] = ("sex", "income")
    utility_label: ClassVar[str] = "income"  # type: ignore[misc]
    PARAMS: ClassVar[tuple[Param, ...]] = ()

    @property
    def id(self) -> str:
        return self.name

    def partition(self) -> tuple[TableRows, TableRows]:
        return adult_partition()


def _infants(text: Any) -> str:
    if text not in INFANTS:
        raise InputError(f"infants={text!r} is unknown (allowed: {', '.join(INFANTS)})")
    return str(text)


@register_scenario
@dataclass(frozen=True)
class Abalone(TabularScenario):
    """UCI-Abalone: S = sex (M, F and I, or M and F), utility = rings > 10 (generative-filter paper Table 3)."""

    infants: str = "keep"

    name: ClassVar[str] = "abalone"
    summary: ClassVar[str] = ("UCI-Abalone (filter paper Table 3): S = sex M/F/I (or M/F), utility rings > 10, "
                              "U = 7 standardised measurements; no known optimum; MSE")
    label_names: ClassVar[tuple[str, ...]] = ("sex", "rings")
    utility_label: ClassVar[str] = "rings"  # type: ignore[misc]
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("infants", _infants, "keep", "keep (S in M, F, I: the paper's three classes) or drop (S in M, F)"),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "infants", _infants(self.infants))

    @property
    def id(self) -> str:
        return f"{self.name}-{'mfi' if self.infants == 'keep' else 'mf'}"

    @property
    def n_s(self) -> int:
        return 3 if self.infants == "keep" else 2

    def partition(self) -> tuple[TableRows, TableRows]:
        return abalone_partition(self.infants)
