"""A non-editable install holds every module and data file of the source tree.

An editable install finds subpackages by path, so a subpackage missing from
setup.cfg's ``packages`` goes unnoticed until someone installs privbench for real.
This test installs the repository into a temporary folder (``pip install --target``),
checks that every source file arrived, and imports every module from there.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHIPPED = (".py", ".yaml", ".json", ".j2", ".gz")  # .json: the shipped suites' baselines; .j2: the report
# templates; .gz: the bundled UCI files


def _package_dirs() -> dict[str, str]:
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    out = {}
    for line in cfg["options"]["package_dir"].strip().splitlines():
        line = line.split("#")[0].strip()
        if line:
            pkg, _, folder = line.partition("=")
            out[pkg.strip()] = folder.strip()
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
         "--target", str(target), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return target


@pytest.mark.slow
def test_every_source_file_is_installed(installed):
    dirs = _package_dirs()
    # longest folder first, so bench/testing maps to privbench.testing, not privbench.bench
    ordered = sorted(dirs.items(), key=lambda kv: -len(kv[1]))
    missing = []
    for folder in {f.split("/")[0] for f in dirs.values()}:
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix not in SHIPPED or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(REPO).as_posix()
            pkg, base = next((p, d) for p, d in ordered if rel.startswith(d + "/"))
            dest = installed / Path(*pkg.split(".")) / rel[len(base) + 1:]
            if not dest.exists():
                missing.append(rel)
    assert missing == []


@pytest.mark.slow
def test_every_module_imports_from_the_install(installed):
    code = (
        "import importlib, pkgutil, sys\n"
        "target = sys.argv[1]\n"
        "bad = []\n"
        "for top in ('privbench.datasets', 'privbench.theory', 'privbench.learners', 'privbench.bench',"
        " 'privbench.testing'):\n"
        "    pkg = importlib.import_module(top)\n"
        "    if not pkg.__file__.startswith(target): bad.append(top + ' from ' + pkg.__file__)\n"
        "    for info in pkgutil.walk_packages(pkg.__path__, top + '.'):\n"
        "        mod = importlib.import_module(info.name)\n"
        "        if not mod.__file__.startswith(target): bad.append(info.name + ' from ' + mod.__file__)\n"
        "print('\\n'.join(bad)); sys.exit(1 if bad else 0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(installed)}
    proc = subprocess.run([sys.executable, "-c", code, str(installed)], capture_output=True, text=True,
                          env=env, cwd=installed, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
