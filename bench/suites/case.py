"""The :class:`Case` (one training run) and :class:`Suite`, and the hashing that names them.

A case's identity, key, case ids and seeds are SHA-256 hashes of its canonical
JSON (:func:`stable_hash`): they name the rows in results/ and must never change.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

DEFAULT_N_TRAIN = 20000
DEFAULT_N_EVAL = 20000
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def stable_hash(obj: Any, n: int = 16) -> str:
    """Hex SHA-256 of the canonical JSON of ``obj`` (stable across runs, machines, Python versions).

    Parameters
    ----------
    obj : Any
        A JSON-able value (keys are sorted; NaN is allowed).
    n : int
        Number of hex digits kept.

    Returns
    -------
    str
        The first ``n`` hex digits of the digest.
    """
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def seed_of(obj: Any) -> int:
    """A 31-bit seed: the first 8 hex digits of :func:`stable_hash` of ``obj``."""
    return int(stable_hash(obj, 8), 16) & 0x7FFFFFFF


def normalize_value(value: Any) -> Any:
    """Canonical JSON-able hyper-parameter value, as typed on a command line.

    Numeric strings (``1e-3``) become numbers, ``True``/``False`` (any case) booleans, and a
    bracketed list (``(64,64)``, ``[64, 64]``, ``()``) a list of normalised items, so that
    ``--learner-param hidden=(64,64)`` means what a suite file's ``hidden: [64, 64]`` means.
    Any other string is kept as it is (``none`` stays a name).
    """
    if isinstance(value, str):
        v = value.strip()
        if NUMBER.match(v):
            return int(v) if re.fullmatch(r"[+-]?\d+", v) else float(v)
        if v.lower() in ("true", "false"):
            return v.lower() == "true"
        if len(v) >= 2 and (v[0], v[-1]) in (("(", ")"), ("[", "]")):
            inner = v[1:-1].strip()
            return [] if not inner else [normalize_value(x) for x in inner.split(",")]
        return value
    if isinstance(value, (list, tuple)):
        return [normalize_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): normalize_value(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Case:
    """One training run of one learner on one scenario at one or more budgets.

    Attributes
    ----------
    suite, experiment : str
        Where it was declared (not part of its identity or seed).
    scenario : str
        Scenario name (``privbench list scenarios``).
    params_json : str
        Canonical JSON of the scenario parameters (as ``Scenario.params()``).
    observation : str or None
        ``useful`` or ``full``; None for ``gaussian-source``.
    privacy : str
        ``mi``, ``map`` or ``chi2``.
    family : str or None
        Mechanism family of a ``binary-gmm`` bound.
    learner : str
        Registered name or ``module:Class``.
    learner_params_json : str
        Canonical JSON of the learner's hyper-parameters.
    budgets : tuple of float
        Distortion budgets, trained as one batched fit; one store row each.
    rep, n_train, n_eval : int
    objective : str or None
        The privacy metric the learner trains for when it differs from
        ``privacy``, the metric it is scored on (e.g. PPAN's MI objective scored
        by MAP accuracy on ``binary-gmm``); None: the same.
    evaluators : str or None
        An extra evaluator set run on top of the standard ones (``mismatch``:
        fresh attackers of several architectures, the attacker-mismatch study);
        None: only the standard evaluators.
    protocol : str or None
        A non-standard experiment protocol run instead of fit-then-evaluate
        (``two-user``: the generative-filter paper's §6.7.5 per-user filters);
        None: the standard protocol.
    distortion : str or None
        Another distortion than the scenario's own (``logloss``: H(U | Z), the privacy funnel;
        finite scenarios); None: the scenario's own.  Part of the identity only when set, so
        that a case with the scenario's own distortion keeps its key, ids and seeds.
    """

    suite: str
    experiment: str
    scenario: str
    params_json: str
    observation: str | None
    privacy: str
    family: str | None
    learner: str
    learner_params_json: str
    budgets: tuple[float, ...]
    rep: int = 0
    n_train: int = DEFAULT_N_TRAIN
    n_eval: int = DEFAULT_N_EVAL
    objective: str | None = None
    evaluators: str | None = None
    protocol: str | None = None
    distortion: str | None = None

    @property
    def params(self) -> dict[str, Any]:
        """The scenario parameters (decoded :attr:`params_json`)."""
        return json.loads(self.params_json)

    @property
    def learner_params(self) -> dict[str, Any]:
        """The learner's hyper-parameters (decoded :attr:`learner_params_json`)."""
        return json.loads(self.learner_params_json)

    def identity(self) -> dict[str, Any]:
        """Everything that determines the case's numbers except the budgets."""
        return {"scenario": self.scenario, "params": self.params, "observation": self.observation,
                "privacy": self.privacy, "family": self.family, "learner": self.learner,
                "learner_params": self.learner_params, "n_train": self.n_train, "n_eval": self.n_eval,
                "rep": self.rep, **({"objective": self.objective} if self.objective else {}),
                **({"evaluators": self.evaluators} if self.evaluators else {}),
                **({"protocol": self.protocol} if self.protocol else {}),
                **({"distortion": self.distortion} if self.distortion else {})}

    @property
    def training_privacy(self) -> str:
        """The privacy metric of the learner's Task (its training objective)."""
        return self.objective or self.privacy

    @property
    def key(self) -> str:
        """Stable id of the batched fit (all budgets): names its store part and claim."""
        return stable_hash(self.identity())

    @property
    def seed(self) -> int:
        """Training seed: a hash of the case's parameters and repetition (31 bits)."""
        return seed_of(["fit", self.identity()])

    @property
    def train_seed(self) -> int:
        """Seed of the training samples (shared by all learners on the same data)."""
        return seed_of(["train", self.scenario, self.params, self.n_train, self.rep])

    @property
    def eval_seed(self) -> int:
        """Seed of the fresh evaluation samples (shared by all learners)."""
        return seed_of(["eval", self.scenario, self.params, self.n_eval, self.rep])

    def case_id(self, budget: float) -> str:
        """Stable id of one store row: the case's parameters, repetition and budget."""
        return stable_hash({**self.identity(), "budget": float(budget)})

    def case_ids(self) -> list[str]:
        """The store row ids of the case, one per budget in order."""
        return [self.case_id(b) for b in self.budgets]

    def with_budgets(self, budgets: Iterable[float]) -> "Case":
        """The same case at other budgets."""
        return replace(self, budgets=tuple(float(b) for b in budgets))

    def label(self) -> str:
        """Short human-readable description (``learner on scenario/observation/privacy rep r``)."""
        obs = f"/{self.observation}" if self.observation else ""
        dist = f"/{self.distortion}" if self.distortion else ""
        return f"{self.learner} on {self.scenario}{obs}/{self.privacy}{dist} rep {self.rep}"


@dataclass(frozen=True)
class Skip:
    """A task of an experiment that a learner picked for it does not serve: no case is made for it.

    Suites skip such tasks and say so (``privbench check`` lists them): they are neither run
    nor counted as failures or regressions.  ``reason`` is the learner's own phrase
    (:meth:`privbench.learners.Learner.refusal`), e.g. ``serves n_s = 2, not n_s=6``.
    """

    experiment: str
    scenario: str  # the scenario id
    observation: str | None
    privacy: str
    learner: str
    reason: str


def skip_lines(skips: Iterable[Skip]) -> list[str]:
    """One line per (experiment, learner, reason), naming the scenarios and how many tasks were skipped."""
    groups: dict[tuple[str, str, str], list[Skip]] = {}
    for s in skips:
        groups.setdefault((s.experiment, s.learner, s.reason), []).append(s)
    lines = []
    for (exp, learner, reason), group in groups.items():
        scenarios = ", ".join(dict.fromkeys(s.scenario for s in group))
        n = len(group)
        lines.append(f"experiment {exp!r} ({scenarios}; {n} task{'s' if n != 1 else ''}) skipped for learner "
                     f"{learner!r}: it {reason}")
    return lines


@dataclass
class Suite:
    """A named, declared list of cases, and the tasks skipped because a learner does not serve them."""

    name: str
    cases: list[Case]
    description: str = ""
    timeout: float | None = None
    source: str = ""
    learners: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"params", "on"}
    skipped: list[Skip] = field(default_factory=list)

    def skipped_experiments(self) -> int:
        """How many (experiment, learner) pairs have a skipped task."""
        return len({(s.experiment, s.learner) for s in self.skipped})
