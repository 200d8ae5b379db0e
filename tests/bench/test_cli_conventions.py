"""CLI conventions: --version, no abbreviated options, help on every option, shell completion."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib.metadata import version

import pytest

from privbench.bench.cli import build_parser, main


def all_parsers(parser: argparse.ArgumentParser):
    """``parser`` and every sub-parser below it, depth first."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from all_parsers(sub)


def test_version_is_the_installed_distribution_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"privbench {version('privbench')}\n"


def test_no_parser_accepts_abbreviations():
    parsers = list(all_parsers(build_parser()))
    assert len(parsers) > 6
    assert [p.prog for p in parsers if p.allow_abbrev] == []


def test_run_seed_is_an_error_naming_the_option():
    proc = subprocess.run([sys.executable, "-m", "privbench.bench.cli", "run", "--suite", "quick", "--seed", "3",
                           "--out", "/nonexistent/never-written"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "--seed" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
