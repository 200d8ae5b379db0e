"""Fuzz suite, files: hostile plug-ins, suite YAML, baselines JSON, results parts, output paths,
saved mechanisms and IDX files.

CLI examples must exit 2 with one error line and change nothing stored; API
examples (mechanisms, IDX) must raise InputError with a one-line message.
Sizes and the slow mode: harness.py and the README ("Reliability").
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import os
import shutil
import stat
import struct
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from harness import api_outcome, check, fuzz_settings, invoke, sandbox  # noqa: E402

RUN = ["--jobs", "1", "--quiet"]
TINY_SUITE = """\
description: one tiny case
reps: 1
n_train: 200
n_eval: 200
learners:
  randomized-response: {}
experiments:
  - name: tiny
    scenario: symmetric-pair
    params: {m: 3, p: 0.3}
    observation: full
    privacy: mi
    budgets: [0.1]
"""


def adhoc(learner: str) -> list[str]:
    return ["run", "--scenario", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full",
            "--learner", learner, "--budget", "0.1", "--n-train", "200", "--n-eval", "200", *RUN, "--out", "out"]


# ---------------------------------------------------------------- plug-in learners

LEARNER_HEAD = ("from privbench.learners.base import Learner\n"
                "class L(Learner):\n    name = 'fuzz'\n    serves = ('finite',)\n"
                "    def _fit(self, samples, task, budgets, seed, device):\n        return []\n")
PLUGINS = [
    "raise RuntimeError('boom on import')\n",
    "def f(:\n    pass\n",
    "raise SystemExit(5)\n",
    "import sys\nsys.exit(0)\n",
    "raise MemoryError\n",
    "import nonexistent_module_xyz\n",
    "L = 5\n",
    "class L:\n    pass\n",
    "def __getattr__(name):\n    raise RuntimeError('no ' + name)\n",
    LEARNER_HEAD + "    def __init__(self):\n        raise RuntimeError('init')\n",
    LEARNER_HEAD + "    def __init__(self):\n        raise SystemExit(3)\n",
    LEARNER_HEAD + "L.serves = None\n",
    LEARNER_HEAD + "L.privacies = 'mi'\n",
    LEARNER_HEAD + "L.observations = 5\n",
    LEARNER_HEAD + "L.test_params = None\n",
    LEARNER_HEAD + "    def resolved(self, task, n_train):\n        raise ValueError('bad')\n",
    LEARNER_HEAD + "    def resolved(self, task, n_train):\n        return 1 / 0\n",
    LEARNER_HEAD.replace("('finite',)", "('images',)"),
    "\x00\x01binary",
    "\ufeff" + "x = (\n",
]


@given(st.sampled_from(PLUGINS), st.sampled_from(["L", "Missing", "L.x", "L.__init__"]))
@fuzz_settings()
def test_fuzz_learner_plugins(source, attr):
    mod = "fuzzplugin_" + uuid.uuid4().hex[:12]
    with sandbox() as box:
        (box / f"{mod}.py").write_text(source, encoding="utf-8")
        try:
            check(invoke("learner-plugin", adhoc(f"{mod}:{attr}"), box, out="out", names=[mod, "learner"]))
        finally:
            sys.modules.pop(mod, None)


# ---------------------------------------------------------------- suite YAML

SUITE_MUTATIONS = [
    ("reps: 1", "reps: 100000000"), ("reps: 1", "reps: 0"), ("reps: 1", "reps: -3"), ("reps: 1", "reps: 1.5"),
    ("reps: 1", "reps: .nan"), ("n_train: 200", "n_train: 1e20"), ("n_train: 200", "n_train: 100000000000000000000"),
    ("n_train: 200", "n_train: 0"), ("n_eval: 200", "n_eval: []"), ("n_eval: 200", "n_eval: 100000000000"),
    ("budgets: [0.1]", "budgets: [.nan]"), ("budgets: [0.1]", "budgets: []"), ("budgets: [0.1]", "budgets: [-1]"),
    ("budgets: [0.1]", "budgets: 0.1"), ("budgets: [0.1]", "budgets: [abc]"), ("budgets: [0.1]", "budgets: [{}]"),
    ("{m: 3, p: 0.3}", "{m: 100000, p: 0.3}"), ("{m: 3, p: 0.3}", "{m: 99999999999999999999999, p: 0.3}"),
    ("{m: 3, p: 0.3}", "{m: 3}"), ("{m: 3, p: 0.3}", "[1, 2]"), ("{m: 3, p: 0.3}", "{m: 3, p: 0.3, q: 1}"),
    ("scenario: symmetric-pair", "scenario: nosuch"), ("scenario: symmetric-pair", "scenario: [1]"),
    ("observation: full", "observation: sideways"), ("privacy: mi", "privacy: [mi, nope]"),
    ("learners:\n  randomized-response: {}", "learners: 5"),
    ("learners:\n  randomized-response: {}", "learners:\n  randomized-response: {steps: 5}"),
    ("learners:\n  randomized-response: {}", "learners:\n  ppan: {steps: -1}"),
    ("learners:\n  randomized-response: {}", "learners:\n  ppan: {steps: 100000000000000000000}"),
    ("description: one tiny case", "timeout: -1"), ("description: one tiny case", "timeout: .inf"),
    ("description: one tiny case", "nosuchkey: 1"), ("experiments:", "experiments: []\nx:"),
    ("  - name: tiny", "  - 5\n  - name: tiny"), ("privacy: mi", "privacy: mi\n    reps: 0"),
    ("privacy: mi", "privacy: mi\n    n_train: [200, 99999999999]"), ("privacy: mi", "privacy: mi\n    family: x"),
]
WHOLE_FILES = [
    "", "[]", "5", "experiments", "{", "a: [", "\t- x", "experiments: !!python/object/apply:os.system ['true']",
    "a: &a [" + ",".join(["*a"] * 0) + "]",
    "a: &a ['x','x','x','x','x','x','x','x','x']\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\nexperiments: [*f]\n",
    "experiments:\n" + "  " + "[" * 5000 + "]" * 5000 + "\n",
    "experiments: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
    "\xff\xfe\x00binary",
    TINY_SUITE.replace("reps: 1", "reps: 10000").replace("privacy: mi", "privacy: mi\n    n_train: [" +
                                                          ", ".join(str(200 + i) for i in range(12)) + "]"),
]


@st.composite
def suite_text(draw):
    if draw(st.booleans()):
        old, new = draw(st.sampled_from(SUITE_MUTATIONS))
        return TINY_SUITE.replace(old, new, 1)
    return draw(st.sampled_from(WHOLE_FILES))


@given(suite_text())
@fuzz_settings()
def test_fuzz_suite_files(text):
    with sandbox() as box:
        (box / "suite.yaml").write_bytes(text.encode("utf-8", "surrogateescape"))
        check(invoke("suite-yaml", ["run", "--suite", "suite.yaml", *RUN, "--out", "out"], box, out="out",
                     names=["suite"], note=text[:300]))


# ---------------------------------------------------------------- baselines JSON

GOOD_ENTRY = {"gap": 0.1, "tol": 0.01, "reps": 1, "learner": "identity",
              "by_learner": {"identity": {"gap": 0.1, "tol": 0.01, "reps": 1}}}
ENTRY_BREAKS = [None, 1, "s", [], {"gap": "abc"}, {"gap": None}, {"tol": None}, {"tol": -1}, {"learner": None},
                {"learner": 5}, {"reps": 0}, {"reps": "1"}, {"by_learner": []}, {"by_learner": {"x": 5}},
                {"by_learner": {"x": {"gap": 1}}}, {"gap": True}]
RAW_BREAKS = ['{"format": "privbench-baselines/1", "entries": {"k": {"gap": NaN, "tol": 0.01, "reps": 1, '
              '"learner": "x"}}}',
              '{"format": "privbench-baselines/1", "entries": {"k": {"gap": Infinity, "tol": 0.01, "reps": 1, '
              '"learner": "x"}}}',
              '{"format": "privbench-baselines/1", "entries": {}}',
              '{"format": "privbench-baselines/1", "entries": []}',
              '{"format": "privbench-baselines/2", "entries": {}}', "", "null", "[1]", "{", "\xff\xfe",
              '{"format": "privbench-baselines/1", "entries": ' + "[" * 100000 + "]" * 100000 + "}"]


@st.composite
def baselines_text(draw):
    if draw(st.booleans()):
        return draw(st.sampled_from(RAW_BREAKS))
    brk = draw(st.sampled_from(ENTRY_BREAKS))
    entry = {**GOOD_ENTRY, **brk} if isinstance(brk, dict) else brk
    if isinstance(brk, dict) and draw(st.booleans()):
        entry.pop(next(iter(brk)))  # the key missing altogether
        if "by_learner" in brk:
            entry["by_learner"] = 7
    key = "tiny|symmetric-pair-m3-p0.3|full|mi||0.1"
    return json.dumps({"format": "privbench-baselines/1", "entries": {key: entry}})


@given(baselines_text())
@fuzz_settings()
def test_fuzz_baselines(text):
    with sandbox() as box:
        (box / "suite.yaml").write_text(TINY_SUITE)
        (box / "b.json").write_bytes(text.encode("utf-8", "surrogateescape"))
        argv = ["check", "--learner", "randomized-response", "--suite", "suite.yaml", "--baselines", "b.json",
                "--jobs", "1"]
        check(invoke("baselines-json", argv, box, names=["b.json"]))


# ---------------------------------------------------------------- results directories

@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A real results directory of one tiny finished case."""
    from privbench.bench.run import run_cases
    from privbench.bench.suites import parse_suite
    import yaml

    out = tmp_path_factory.mktemp("fuzz-store") / "res"
    suite = parse_suite(yaml.safe_load(TINY_SUITE), name="tiny")
    run_cases(suite.cases, out, suite="tiny", jobs=1, progress="none")
    return out


def only_part(res: Path) -> Path:
    return next((res / "records").glob("part-*.parquet"))


def same_table(a: Path, b: Path) -> bool:
    """Do two parquet files decode to equal tables (read by pyarrow alone, not by privbench)?"""
    import pyarrow.parquet as pq

    try:  # pandas' equals: a NaN equals a NaN (a flipped bit in a NaN's payload leaves a NaN: no harm)
        return pq.read_table(a).to_pandas().equals(pq.read_table(b).to_pandas())
    except Exception:  # noqa: BLE001 - unreadable: not the same
        return False


def break_store(res: Path, how: str, draw_bytes: bytes) -> None:
    """Damage the results directory ``res`` in one way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    part = only_part(res)
    if how == "truncate":
        part.write_bytes(part.read_bytes()[: len(draw_bytes) % max(1, part.stat().st_size)])
    elif how == "garbage":
        data = bytearray(part.read_bytes())
        for i, b in enumerate(draw_bytes[:64]):
            data[(i * 7919 + b) % len(data)] ^= b or 1
        part.write_bytes(bytes(data))
    elif how == "thin-part":
        pq.write_table(pa.table({"case_id": ["x"], "status": ["ok"], "budget": [0.1]}), part)
    elif how == "bad-status":
        t = pq.read_table(part)
        pq.write_table(t.set_column(t.schema.get_field_index("status"), "status", pa.array(["weird"])), part)
    elif how == "null-case-id":
        t = pq.read_table(part)
        pq.write_table(t.set_column(0, "case_id", pa.array([None], pa.string())), part)
    elif how == "pickle":
        part.write_bytes(b"\x80\x04\x95" + draw_bytes)
    elif how == "marker":
        (res / "privbench-results.json").write_bytes(draw_bytes or b"{")
    elif how == "no-marker":
        (res / "privbench-results.json").unlink()
    elif how == "part-is-dir":
        part.unlink()
        part.mkdir()
    else:  # records-is-file
        shutil.rmtree(res / "records")
        (res / "records").write_bytes(draw_bytes)


@given(st.sampled_from(["truncate", "garbage", "thin-part", "bad-status", "null-case-id", "pickle", "marker",
                        "no-marker", "part-is-dir", "records-is-file"]),
       st.binary(min_size=1, max_size=200), st.sampled_from(["report", "compare", "resume", "csv"]))
@fuzz_settings()
def test_fuzz_results_dirs(stored, how, junk, command):
    with sandbox() as box:
        shutil.copytree(stored, box / "res")
        shutil.copytree(stored, box / "good")
        break_store(box / "res", how, junk)
        if how == "garbage":  # flipped bytes that pyarrow decodes to the very same table harm nothing
            assume(not same_table(only_part(stored), only_part(box / "res")))
        argv = {"report": ["report", "res"], "compare": ["compare", "good", "res"],
                "resume": ["run", "--suite", "suite.yaml", *RUN, "--out", "res", "--resume"],
                "csv": ["run", "--suite", "suite.yaml", *RUN, "--out", "res", "--resume", "--csv", "x.csv"]}[command]
        (box / "suite.yaml").write_text(TINY_SUITE)
        check(invoke("results-parts", argv, box, names=["res", "privbench results"], note=how))


# ---------------------------------------------------------------- output paths

def hostile_path(box: Path, kind: str) -> str:
    """A path in ``box`` that no report may be written to."""
    if kind == "dir":
        (box / "d").mkdir()
        return "d"
    if kind == "fifo":
        os.mkfifo(box / "f")
        return "f"
    if kind == "device" and os.geteuid() == 0:
        os.mknod(box / "dev", stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null twin
        return "dev"
    if kind == "symlink":
        (box / "target.txt").write_text("precious\n")
        (box / "link").symlink_to(box / "target.txt")
        return "link"
    if kind == "socket":
        import socket

        s = socket.socket(socket.AF_UNIX)
        s.bind(str(box / "sock"))
        s.close()
        return "sock"
    return {"empty": "", "blank": " ", "missing-dir": "no/such/dir/r.html", "dot": ".", "device": "."}[kind]


@given(st.sampled_from(["dir", "fifo", "device", "symlink", "socket", "empty", "blank", "missing-dir", "dot"]),
       st.sampled_from(["--html", "--markdown", "compare-csv", "run-csv", "compare-empty", "compare-foreign"]))
@fuzz_settings()
def test_fuzz_output_paths(stored, kind, flag):
    with sandbox() as box:
        shutil.copytree(stored, box / "res")
        target = hostile_path(box, kind)
        if flag in ("--html", "--markdown"):
            argv = ["report", "res", flag, target]
        elif flag == "compare-csv":
            argv = ["compare", "res", "res", "--csv", target]
        elif flag == "run-csv":
            (box / "suite.yaml").write_text(TINY_SUITE)
            argv = ["run", "--suite", "suite.yaml", *RUN, "--out", "res", "--resume", "--csv", target]
        elif flag == "compare-empty":
            (box / "empty").mkdir()
            argv = ["compare", "res", "empty"]
        else:
            (box / "foreign").mkdir()
            (box / "foreign" / "notes.txt").write_text("mine\n")
            argv = ["compare", "foreign", "res"]
        check(invoke("output-paths", argv, box))


# ---------------------------------------------------------------- saved mechanisms (Python API)

def good_blob(box: Path) -> dict:
    """The saved state of a real fitted mechanism (randomized response on a 3-letter model)."""
    import numpy as np
    import torch

    from privbench.datasets.scenarios import make_scenario
    from privbench.learners import make_learner

    sc = make_scenario("symmetric-pair", {"m": 3, "p": 0.3})
    mech = make_learner("randomized-response").fit(sc.sample(200, np.random.default_rng(0)), sc.task("full", "mi"),
                                                   0.1, seed=0)
    mech.save(box / "good.pt")
    return torch.load(box / "good.pt", weights_only=True)


MECH_BREAKS = [("task", "not json"), ("task", "[]"), ("task", "{}"), ("task", '{"kind": 5}'), ("task", None),
               ("budget", float("nan")), ("budget", "abc"), ("budget", None), ("budget", -1.0),
               ("budget", float("inf")), ("info", "not json"), ("info", "[]"), ("config", "{"), ("config", "5"),
               ("tensors", 5), ("tensors", None), ("type", None), ("type", "nosuch"), ("format", "x"),
               ("task", "[" * 100000), ("config", "[" * 50000 + "]" * 50000)]
_T = '{"kind": "finite", "observation": "full", "privacy": "mi", "n_s": 3, "n_u": 3, "n_z": 3, "utility": '
MECH_BREAKS += [("task", _T + '[["u", 1]]}'), ("task", _T + '"u"}'), ("task", _T + '[[5, 2]]}'),
                ("task", _T + '{"u": true}}'), ("task", _T + '[["u", 2], ["u", 2]]}'), ("task", _T + '[[]]}')]


@pytest.fixture(scope="module")
def blob(tmp_path_factory):
    return good_blob(tmp_path_factory.mktemp("fuzz-mechanism"))


@given(st.sampled_from(MECH_BREAKS), st.booleans())
@fuzz_settings()
def test_fuzz_mechanism_files(blob, brk, drop):
    import torch

    from privbench.learners import load_mechanism

    key, value = brk
    bad = dict(blob)
    if drop:
        bad.pop(key)
    else:
        bad[key] = value
    with sandbox() as box:
        torch.save(bad, box / "m.pt")
        check(api_outcome("mechanism-files", f"load_mechanism {key}={str(value)[:40]!r} drop={drop}",
                          load_mechanism, box / "m.pt"))


# ---------------------------------------------------------------- IDX files (Python API)

def idx_header(code: int, dims: list[int]) -> bytes:
    return bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)


@st.composite
def idx_bytes(draw):
    kind = draw(st.sampled_from(["huge-header", "bomb", "truncated", "trailing", "random", "bad-code", "zero-dims",
                                 "bad-gzip"]))
    if kind == "huge-header":
        return idx_header(0x08, [2**32 - 1, 2**32 - 1, 2**32 - 1]) + b"\x00" * 16
    if kind == "bomb":
        return gzip_bomb()
    if kind == "truncated":
        return idx_header(0x0D, [10, 10]) + b"\x00" * draw(st.integers(0, 399))
    if kind == "trailing":
        return idx_header(0x08, [3]) + b"\x00" * draw(st.integers(4, 50))
    if kind == "bad-code":
        return idx_header(draw(st.sampled_from([0, 1, 0x0A, 0xFF])), [1]) + b"\x00"
    if kind == "zero-dims":
        return bytes([0, 0, 8, 0])
    if kind == "bad-gzip":
        return b"\x1f\x8b" + draw(st.binary(max_size=100))
    return draw(st.binary(max_size=300).filter(lambda b: not (len(b) >= 4 and b[:2] == b"\x00\x00")))


@functools.lru_cache(maxsize=1)
def gzip_bomb() -> bytes:
    """An IDX file that declares 4 bytes and decompresses to 50 MB of zeros."""
    return gzip.compress(idx_header(0x08, [4]) + bytes(50_000_000), compresslevel=1)


@given(idx_bytes())
@fuzz_settings()
def test_fuzz_idx_files(data):
    from privbench.datasets.real.idx import read_idx

    with sandbox() as box:
        (box / "f.idx").write_bytes(data)
        check(api_outcome("idx-files", f"read_idx {data[:24]!r}", read_idx, box / "f.idx"))


# ---------------------------------------------------------------- generated values in suite and baseline files

SCALAR = st.one_of(st.integers().map(str), st.floats().map(repr),
                   st.text(st.characters(blacklist_characters="\n\r:#{}[],&*!|>'\"%@`\\", blacklist_categories=("Cs",
                                                                                                               "Cc")),
                           max_size=16),
                   st.sampled_from([".nan", ".inf", "-.inf", "0x10", "1_000", "true", "~", "null", "1e3", "10001",
                                    "0", "-1", "1.0", "2.5", "99999999999999999999"]))


def strict_int(v, lo, hi):
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def positive_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


# (line of TINY_SUITE to replace, its replacement with "{}", the key, a predicate of a VALID parsed value)
SUITE_SLOTS = [("reps: 1", "reps: {}", "reps", lambda v: strict_int(v, 1, 10_000)),
               ("n_train: 200", "n_train: {}", "n_train", lambda v: strict_int(v, 2, 10_000_000)),
               ("n_eval: 200", "n_eval: {}", "n_eval", lambda v: strict_int(v, 2, 10_000_000)),
               ("reps: 1", "reps: 1\ntimeout: {}", "timeout", lambda v: v is None or positive_number(v))]  # null: none


def finite_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


BASELINE_SLOTS = {"gap": finite_number, "tol": lambda v: finite_number(v) and v >= 0,
                  "reps": lambda v: strict_int(v, 1, 10**18), "learner": lambda v: isinstance(v, str)}
JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
                        st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                               max_size=2))


@given(st.booleans(), st.sampled_from(range(len(SUITE_SLOTS))), SCALAR, st.sampled_from(sorted(BASELINE_SLOTS)),
       JSON_VALUES, st.booleans())
@fuzz_settings(weight=2)
def test_fuzz_generated_file_values(suite_file, slot, scalar, field, value, nested):
    import yaml

    with sandbox() as box:
        (box / "suite.yaml").write_text(TINY_SUITE)
        if suite_file:
            old, new, key, valid = SUITE_SLOTS[slot]
            text = TINY_SUITE.replace(old, new.replace("{}", scalar), 1)
            try:
                parsed = yaml.safe_load(text)
                assume(not (isinstance(parsed, dict) and valid(parsed.get(key))))
            except yaml.YAMLError:
                pass  # not YAML at all: bad input too
            (box / "suite.yaml").write_text(text)
            argv = ["run", "--suite", "suite.yaml", *RUN, "--out", "out"]
            names, note = ["suite"], text
        else:
            assume(not BASELINE_SLOTS[field](value))
            stat = {**GOOD_ENTRY, field: value}
            entry = {**GOOD_ENTRY, "by_learner": {"identity": stat}} if nested and field != "learner" else stat
            (box / "b.json").write_text(json.dumps({"format": "privbench-baselines/1",
                                                    "entries": {"tiny|symmetric-pair-m3-p0.3|full|mi||0.1": entry}}))
            argv = ["check", "--learner", "randomized-response", "--suite", "suite.yaml", "--baselines", "b.json",
                    "--jobs", "1"]
            names, note = ["b.json"], f"{field}={value!r} nested={nested}"
        check(invoke("generated-file-values", argv, box, out="out", names=names, note=note))
