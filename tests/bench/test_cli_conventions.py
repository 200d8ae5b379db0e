"""CLI conventions: --version, no abbreviated options, help on every option, shell completion."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import version

import pytest

from privbench.bench.cli import build_parser, main
from privbench.bench.cli.optimum import hyper_parameters
from privbench.learners import available


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


def bash_complete(script, words):
    """COMPREPLY of the generated bash completion for the command line ``words`` (last word being typed)."""
    words_q = " ".join(shlex.quote(w) for w in words)
    prog = (f"source {shlex.quote(str(script))}; COMP_WORDS=({words_q}); COMP_CWORD={len(words) - 1}; "
            '_shtab_privbench; printf "%s\\n" "${COMPREPLY[@]}"')
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_commands_options_and_learner_names(capsys, tmp_path):
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "privbench.bash"
    script.write_text(capsys.readouterr().out)
    assert "report" in bash_complete(script, ["privbench", "re"])
    assert bash_complete(script, ["privbench", "run", "--se"]) == ["--seeds"]
    learners = bash_complete(script, ["privbench", "run", "--learner", "ppan-g"])
    assert sorted(learners) == sorted(n for n in available() if n.startswith("ppan-g")) and learners
    assert bash_complete(script, ["privbench", "check", "--suite", "qu"]) == ["quick"]
    assert bash_complete(script, ["privbench", "optimum", "symmetric-p"]) == ["symmetric-pair"]


def test_zsh_completion_names_the_command_and_the_learners(capsys):
    assert main(["completion", "zsh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#compdef privbench")
    assert "(" + " ".join(sorted(available())) + ")" in out


def test_completion_of_an_unknown_shell_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["completion", "tcsh"])
    assert exc.value.code == 2 and "invalid choice: 'tcsh'" in capsys.readouterr().err


def test_every_option_and_positional_has_help_text():
    missing = [f"{p.prog} {a.option_strings or a.dest}" for p in all_parsers(build_parser()) for a in p._actions
               if not (a.help and a.help.strip())]
    missing += [f"{p.prog} {c.dest}" for p in all_parsers(build_parser()) for a in p._actions
                if isinstance(a, argparse._SubParsersAction) for c in a._get_subactions()
                if not (c.help and c.help.strip())]
    assert missing == []


def test_list_learners_json_gives_every_learner_its_defaults(capsys):
    assert main(["list", "learners", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    table = available()
    assert [r["name"] for r in rows] == list(table)
    for r in rows:
        # the defaults a learner constructed with no arguments stores (independent of the signature reading)
        assert r["params"] == json.loads(json.dumps(table[r["name"]]().get_params())), r["name"]
    assert next(r for r in rows if r["name"] == "ppan")["params"]["dtype"] == "float64"


def test_list_learners_text_shows_hyper_parameters(capsys):
    assert main(["list", "learners"]) == 0
    out = capsys.readouterr().out
    ppan = out.split("\nppan:")[1].split("\nppan-gaussian:")[0]
    flat = " ".join(ppan.split())
    assert "hyper-parameters: schedule='default', steps=None," in flat and "dtype='float64'" in flat
    assert "\n    hyper-parameters: none\n" in out.split("\nconstant:")[1]


def test_a_hyper_parameter_without_default_is_shown_required():
    class Plug:
        def __init__(self, width, depth=3, *args, **kwargs):
            pass

    assert {k: repr(v) for k, v in hyper_parameters(Plug).items()} == {"width": "REQUIRED", "depth": "3"}


def test_list_scenarios_json_marks_required_parameters(capsys):
    assert main(["list", "scenarios", "--json"]) == 0
    rows = {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["symmetric-pair"]["params"]["m"] == {"help": rows["symmetric-pair"]["params"]["m"]["help"],
                                                     "required": True, "default": None}


def test_output_cut_short_by_its_reader_is_not_reported_as_an_io_failure():
    # stdout is a pipe whose reader has gone ('privbench list scenarios | head -n 1'), deterministically
    prog = ("import os, sys\n"
            "r, w = os.pipe(); os.close(r); os.dup2(w, 1)\n"
            "from privbench.bench.cli import main\n"
            "rc = main(['list', 'scenarios'])\n"
            "sys.stderr.write(f'rc={rc}\\n')\n")
    proc = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True)
    assert proc.stderr == "rc=141\n"
