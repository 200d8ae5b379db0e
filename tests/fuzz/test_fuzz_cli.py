"""Fuzz suite, command line: hostile arguments to every ``privbench`` command.

Every example is bad input: the invocation must exit 2 with one error line,
no traceback, no hang, nothing stored changed, no stray file (see harness.py).
Sizes and the slow mode: harness.py and the README ("Reliability").
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from harness import check, fuzz_settings, invoke, sandbox  # noqa: E402

BASE = ["--scenario", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full",
        "--learner", "randomized-response", "--budget", "0.1", "--n-train", "200", "--n-eval", "200",
        "--jobs", "1", "--quiet"]
JUNK = st.sampled_from(["", " ", "abc", "nan", "NaN", "inf", "-inf", "1e309", "-1", "0", "1e20", "0x10",
                        "99999999999999999999999", "3000000000000", "-0", "1.5", "None", "[]", "{}", "\x00",
                        "é", "1e-400", "--", "=", "m=3"])
HUGE_INT = st.integers(min_value=10**12, max_value=10**40).map(str)
NONPOS_INT = st.integers(max_value=0).map(str)


@st.composite
def optimum_args(draw):
    """``privbench optimum`` with one bad scenario parameter, budget or metric."""
    kind = draw(st.sampled_from(["sympair-m", "sympair-p", "gmm", "budget", "finite", "gauss", "guarantee",
                                 "names"]))
    if kind == "guarantee":  # a bad --eps, or a metric that gives no guarantee (map with |S| = 3)
        eps = draw(st.sampled_from(["nan", "inf", "-1", "abc", "", "1e309", "-1e-9", "-inf", None]))
        if eps is None:
            return ["optimum", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full",
                    "--privacy", "map", "--budget", "0.1", "--guarantee"], ["guarantee"]
        return ["optimum", "binary", "--param", "p=0.3", "--param", "q=0.2", "--observation", "full",
                "--budget", "0.1", "--guarantee", f"--eps={eps}"], ["eps"]
    if kind == "sympair-m":
        m = draw(st.one_of(JUNK, HUGE_INT, NONPOS_INT, st.sampled_from(["1", "100000", "5001", "2.5"])))
        return ["optimum", "symmetric-pair", "--param", f"m={m}", "--param", "p=0.3", "--observation",
                draw(st.sampled_from(["useful", "full"])), "--privacy", draw(st.sampled_from(["mi", "map", "chi2"])),
                "--budget", "0.1"], ["m"]
    if kind == "sympair-p":
        p = draw(st.one_of(JUNK.filter(lambda t: t not in ("0", "-0", "1e-400")), st.floats(min_value=1.0001),
                           st.floats(max_value=-1e-9)))
        return ["optimum", "symmetric-pair", "--param", "m=3", "--param", f"p={p}", "--observation", "full",
                "--budget", "0.1"], ["p"]
    if kind == "gmm":
        name = draw(st.sampled_from(["prior", "mu", "sigma0", "sigma1"]))
        val = draw(st.sampled_from(["1e300", "1e308", "-1", "0", "nan", "inf", "abc", "1e-320", "1e200"]))
        vals = {"prior": "0.5", "mu": "1", "sigma0": "1", "sigma1": "1", name: val}
        if name in ("mu",) and val in ("0",):
            vals[name] = "-1"
        if name in ("prior", "mu") and val in ("1e-320", "1e200"):
            vals[name] = "nan"
        return ["optimum", "binary-gmm", *sum((["--param", f"{k}={v}"] for k, v in vals.items()), []),
                "--observation", "full", "--budget", "0.1"], [name]
    if kind == "budget":
        b = draw(st.sampled_from(["nan", "inf", "-1", "abc", "", "1e309", "-1e-9"]))
        return ["optimum", "z-channel", "--param", "p=0.4", "--param", "e=0.2", "--observation", "full",
                f"--budget={b}"], ["budget"]
    if kind == "finite":
        joint = draw(st.sampled_from(["[[0.5,0],[0,0.5]]", "[[1e300,0],[0,1e300]]", "x",
                                      "[[NaN,0],[0,1]]", "[]", "[[[0.5]]]", "[[0.6,0],[0,0.6]]", "1e999"]))
        dist = draw(st.sampled_from(["[[0,1e300],[1e300,0]]", "[[0,1],[1,0]]", "[[0,-1],[1,0]]", "[[0,1]]",
                                     "[[0,Infinity],[1,0]]", "[" * 5000 + "]" * 5000]))
        if joint == "[[0.5,0],[0,0.5]]" and dist == "[[0,1],[1,0]]":
            dist = "[[0,1e300],[1e300,0]]"
        return ["optimum", "finite", "--param", f"joint={joint}", "--param", f"distortion={dist}",
                "--observation", "full", "--budget", "0.1"], ["joint", "distortion", "1e300", "too large"]
    if kind == "gauss":
        return ["optimum", "gaussian-source", "--param",
                f"variances={draw(st.sampled_from(['1e309,1', '1,-1', ',', '1,nan', '1e309', '0']))}",
                "--budget", "0.1"], ["variances"]
    tok = draw(st.sampled_from(["nosuch", "", " ", "symmetric-pair\x00"]))
    return ["optimum", tok, "--budget", "0.1"], []


@given(optimum_args())
@fuzz_settings()
def test_fuzz_optimum(drawn):
    argv, names = drawn
    with sandbox() as box:
        check(invoke("optimum", argv, box, names=names))


def base(m: str = "3", p: str = "0.3", learner: str = "randomized-response") -> list[str]:
    """A valid, fast ad-hoc run (one fixed learner on a 3-letter model, 200 samples, one worker)."""
    return ["--scenario", "symmetric-pair", "--param", f"m={m}", "--param", f"p={p}", "--observation", "full",
            "--learner", learner, "--budget", "0.1", "--n-train", "200", "--n-eval", "200", "--jobs", "1", "--quiet"]


COUNT_FLAGS = ("--seeds", "--n-train", "--n-eval", "--jobs")
BAD_COUNTS = st.one_of(st.sampled_from(["", "abc", "nan", "inf", "1e20", "1e309", "0x10", "1.5", "-0", "0", "-1",
                                        "None", "\x00", "99999999999999999999999", "3000000000000", "1000000000"]),
                       NONPOS_INT, HUGE_INT)


@st.composite
def run_args(draw):
    """``privbench run`` (ad hoc) with one bad option value; the rest is a valid, fast run."""
    flag = draw(st.sampled_from([*COUNT_FLAGS, "--family", "--learner-param", "--timeout", "--budget", "--param",
                                 "--objective", "--scheduler", "--learner", "--csv", "--distortion"]))
    if flag in COUNT_FLAGS:
        value = draw(BAD_COUNTS)
        if flag == "--jobs" and value == "1000000000":
            value = "-5"
        return base() + [f"{flag}={value}"], [flag]
    if flag == "--family":
        return base() + [f"--family={draw(st.sampled_from(['', ' ', 'x', 'nosuch', 'shift']))}"], ["family"]
    if flag == "--learner-param":
        value = draw(st.sampled_from(["steps=-1", "steps=abc", "steps=nan", "steps=", "steps=1e30", "lr=-1",
                                      "lr=nan", "nosuch=1", "steps=0", "batch=0", "steps=99999999999999999999"]))
        return base(learner="ppan") + ["--learner-param", value], [value.split("=")[0]]
    if flag == "--timeout":
        return base() + [f"--timeout={draw(st.sampled_from(['0', '-1', 'nan', 'inf', 'abc', '', '1e309']))}"], \
            ["timeout"]
    if flag == "--budget":
        return base() + [f"--budget={draw(st.sampled_from(['nan', '-1', 'inf', 'abc', '1e309', '0.1']))}"], \
            ["budget"]
    if flag == "--param":
        name, value = draw(st.sampled_from([("m", "100000"), ("m", "3000000000000"), ("m", "1"), ("p", "2"),
                                            ("m", ""), ("m", "nan"), ("m", "99999999999999999999999"),
                                            ("m", "2.5"), ("p", "nan"), ("m", "1e3")]))
        return base(**{name: value}), [name]
    if flag == "--objective":
        return base() + [f"--objective={draw(st.sampled_from(['chi3', '', 'MI']))}"], ["objective"]
    if flag == "--scheduler":
        return base() + ["--scheduler", "tcp://127.0.0.1:1"], ["scheduler"]
    if flag == "--learner":
        value = draw(st.sampled_from([":", ":X", "../x:X", "os:path", "nosuch", "", "a:b:c", "builtins:int",
                                      "privbench.learners.base:Mechanism", "json:nosuch"]))
        return base(learner=value), ["learner"]
    if flag == "--distortion":  # unknown, another case, one without a provider, or one the learner refuses
        return base() + [f"--distortion={draw(st.sampled_from(['', 'nosuch', 'LOGLOSS', 'mse', 'xent', 'logloss']))}"], \
            ["distortion"]
    return base() + ["--csv", draw(st.sampled_from([".", "out", "/"]))], ["csv", "CSV"]


@given(run_args())
@fuzz_settings()
def test_fuzz_run_options(drawn):
    argv, names = drawn
    with sandbox() as box:
        check(invoke("run-options", ["run", *argv, "--out", "out"], box, out="out", names=names))


# ---------------------------------------------------------------- generated values in every slot

def as_int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def as_float(text: str) -> float | None:
    try:
        v = float(text.strip())
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def int_in(lo: int, hi: int):
    return lambda t: (v := as_int(t)) is not None and lo <= v <= hi


def float_in(lo: float, hi: float, open_lo: bool = False):
    return lambda t: (v := as_float(t)) is not None and (lo < v if open_lo else lo <= v) and v <= hi


def one_of(*names: str):
    return lambda t: t in names


OPT = ["optimum", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full", "--budget", "0.1"]
GMM = ["optimum", "binary-gmm", "--param", "prior=0.5", "--param", "mu=1", "--param", "sigma0=1", "--param",
       "sigma1=1", "--observation", "full", "--budget", "0.1"]
# (argv with one slot "{}", the name the error must mention or "", the predicate of a VALID value: drawn values
# that satisfy it are skipped, so every example is bad input by an independent rule, not by privbench's own)
SLOTS = [
    ([*OPT[:3], "m={}", *OPT[4:]], "m", int_in(2, 256)),
    ([*OPT[:5], "p={}", *OPT[6:]], "p", float_in(0.0, 1.0)),
    ([*OPT[:-1], "{}"], "budget", float_in(0.0, math.inf)),
    ([*OPT[:7], "{}", *OPT[8:]], "observation", one_of("useful", "full")),
    ([*OPT, "--privacy={}"], "privacy", one_of("mi", "map", "chi2")),
    (["optimum", "{}", "--budget", "0.1"], "", lambda t: True if t.strip() in KNOWN_SCENARIOS else False),
    ([*GMM[:7], "sigma0={}", *GMM[8:]], "sigma0", float_in(1e-100, 1e100)),
    ([*GMM[:5], "mu={}", *GMM[6:]], "mu", float_in(0.0, 1e100)),
    ([*GMM[:3], "prior={}", *GMM[4:]], "prior", float_in(0.0, 1.0, open_lo=True)),
    (["run", *base(), "--seeds={}"], "seeds", int_in(1, 10_000)),
    (["run", *base(), "--n-train={}"], "n-train", int_in(2, 10_000_000)),
    (["run", *base(), "--n-eval={}"], "n-eval", int_in(2, 10_000_000)),
    (["run", *base(), "--jobs={}"], "jobs", int_in(1, 1024)),
    (["run", *base(), "--threads={}"], "threads", int_in(1, 1024)),
    (["run", *base(), "--timeout={}"], "timeout", float_in(0.0, math.inf, open_lo=True)),
    (["run", *base(learner="ppan"), "--learner-param", "steps={}"], "steps", int_in(1, 1_000_000)),
    (["run", *base(learner="ppan"), "--learner-param", "lr={}"], "lr", float_in(0.0, math.inf, open_lo=True)),
    (["list", "{}"], "", one_of("scenarios", "learners")),
    (["report", "{}"], "", lambda t: False),
    (["compare", "{}", "{}"], "", lambda t: False),
    (["check", "--learner={}", "--jobs", "1"], "", lambda t: t.strip() in KNOWN_LEARNERS),
    (["check", "--learner", "identity", "--suite={}", "--jobs", "1"], "suite",
     lambda t: t.strip() in ("quick", "regression", "paper")),
]
KNOWN_SCENARIOS = ("symmetric-pair", "binary", "finite", "gaussian-scalar", "gaussian-vector", "gaussian-source",
                   "binary-gmm", "gmm-k", "z-channel", "mnist-subset", "digits", "hypothesis-testing")
KNOWN_LEARNERS = ("chi2-sanitizer", "constant", "gap", "gap-mixture", "gaussian-noise", "identity", "latent-filter",
                  "plugin", "ppan", "ppan-gaussian", "ppan-gmm", "ppan-image", "ppan-linear", "ppan-seed",
                  "randomized-response")
VALUES = st.one_of(st.text(max_size=24), st.integers().map(str), st.floats().map(repr),
                   st.from_regex(r"-?[0-9]{1,30}(\.[0-9]{0,5})?(e[+-]?[0-9]{1,4})?", fullmatch=True),
                   st.sampled_from(["", " ", "nan", "inf", "-inf", "1e309", "\x00", "0", "-0", "1e-400"]))


@given(st.sampled_from(range(len(SLOTS))), VALUES)
@fuzz_settings(weight=3)
def test_fuzz_generated_values(slot, value):
    template, name, valid = SLOTS[slot]
    assume(not valid(value) and "\x00" not in value or value == "\x00")
    argv = [a.replace("{}", value) for a in template]
    with sandbox() as box:
        check(invoke("generated-values", argv, box, out="out", names=[name] if name else []))
