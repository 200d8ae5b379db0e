"""Run a suite file whose learners are plug-in modules written into a temporary directory, as a user
would (``privbench run --jobs 1`` in a fresh interpreter), and read its records in running order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from privbench.bench.store import read_records


@pytest.fixture
def run_plugin_suite():
    """The suite runner below, as a fixture (tests import no sibling modules under --import-mode=importlib)."""
    return plugin_suite_run


def plugin_suite_run(tmp_path: Path, modules: dict[str, str], suite: str):
    """Write ``modules`` (name -> source) and ``suite`` under ``tmp_path``, run it on one worker and
    return its records sorted by start time (a failed run's stderr is in the assertion message)."""
    for name, source in modules.items():
        (tmp_path / f"{name}.py").write_text(source)
    (tmp_path / "suite.yaml").write_text(suite)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "privbench.bench.cli", "run", "--suite", str(tmp_path / "suite.yaml"),
                          "--out", str(tmp_path / "res"), "--jobs", "1", "--quiet"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode in (0, 1), out.stderr[-2000:]
    return read_records(tmp_path / "res").sort_values("started_at")
