"""``privbench.testing`` works outside a pytest run: importing it never imports pytest (issue 13)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["pytest"] = None           # any 'import pytest' now raises ImportError
    from privbench.testing import NearOptimalReport, assert_near_optimal
    from privbench.datasets import SymmetricPair
    from privbench.learners import make_learner

    sc = SymmetricPair(3, 0.3)
    rows = assert_near_optimal(make_learner("plugin"), sc, [0.2], tol=0.05, observation="full",
                               n_train=20000, n_eval=4000)
    assert isinstance(rows, NearOptimalReport) and len(rows) == 1 and rows[0]["status"] == "ok"
    try:
        assert_near_optimal(make_learner("identity"), sc, [0.2], tol=0.05, observation="full",
                            n_train=2000, n_eval=2000)
    except AssertionError as exc:
        assert "is not near optimal" in str(exc), exc
    else:
        raise SystemExit("the identity release passed as near optimal")
    try:
        from privbench.testing import near_optimal  # the fixture is the one part that needs pytest
    except ImportError:
        pass
    else:
        raise SystemExit("the fixture imported without pytest")
    print("OK")
""")


def test_assert_near_optimal_runs_with_pytest_blocked():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("OK")


def test_importing_privbench_testing_does_not_import_pytest():
    code = "import sys, privbench.testing; sys.exit(1 if 'pytest' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_the_fixture_is_still_there(near_optimal):
    from privbench.testing import assert_near_optimal

    assert near_optimal is assert_near_optimal
