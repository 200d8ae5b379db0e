"""Columns beside a certified score: the lower end and the family bound, against the committed table."""

from __future__ import annotations

import math

import pytest

from privbench.bench.beside import beside_fields
from privbench.bench.records import COLUMN_NAMES
from privbench.datasets import BinaryGMM
from privbench.theory import optimum

MISMATCH = BinaryGMM(prior=0.75, mu=3.0, sigma0=2.0, sigma1=1.0)


def test_certified_rows_carry_the_lower_end_and_the_family_bound():
    opt = optimum(MISMATCH, 3.0, "map", "full", "certified")
    got = beside_fields(MISMATCH, "map", "full", 3.0, 3.0, opt,
                        lambda d: optimum(MISMATCH, d, "map", "full", "certified").lower)
    assert set(got) <= set(COLUMN_NAMES)
    # theory/mixture/gmm_certified.csv, row binary-gmm-prior0.75-mu3-s02-s11, full, map, D = 3
    assert opt.value == pytest.approx(0.756918928) and got["optimum_lower_at_budget"] == pytest.approx(0.756502798)
    assert got["optimum_lower_at_distortion"] == pytest.approx(0.756502798)
    assert got["family_bound"] == "general" and got["family_bound_at_budget"] == pytest.approx(0.848091255, abs=1e-6)
    assert got["family_bound_at_distortion"] == pytest.approx(0.848091255, abs=1e-6)


def test_mi_has_no_family_and_other_bounds_add_nothing():
    opt = optimum(MISMATCH, 3.0, "mi", "full", "certified")
    got = beside_fields(MISMATCH, "mi", "full", 3.0, 3.0, opt, lambda d: 0.0)
    assert got["family_bound"] is None and math.isnan(got["family_bound_at_budget"])
    # theory/mixture/gmm_certified.csv, row binary-gmm-prior0.75-mu3-s02-s11, full, mi, D = 3 (recomputed 2ccf139)
    assert got["optimum_lower_at_budget"] == pytest.approx(0.103342813)
    fam = optimum(MISMATCH, 3.0, "map", "full", "general")
    assert beside_fields(MISMATCH, "map", "full", 3.0, 3.0, fam, lambda d: 0.0) == {}
