"""The evaluator process: ``python -m privbench.bench.artifact_eval`` (see :mod:`privbench.bench.artifacts`).

Reads requests ``(case, files, errors, modules, budget_kind)`` as pickles on stdin; for each
budget it loads the saved mechanism (a built-in type with
:func:`~privbench.learners.load_builtin_mechanism`; a third-party type only in the release server, which
describes it here as plain data: :class:`~privbench.bench.remote_release.RemoteMechanism`, so that no
plug-in module is ever imported in this long-lived process, where it could patch the evaluators for its own
case and later ones) and scores it with
:func:`~privbench.bench.execute.score_budget`, every release made by a release
server (:mod:`privbench.learners.serve`, a process with no bench code, from its
own copy of the file; a case whose mechanisms come from other third-party modules than the server has
imported gets a fresh server, so that one author's module, which may load the bench or patch what a
release runs, never shares a process with another author's releases); it answers one pickle per
request on a private copy of stdout (file descriptor 1 itself is pointed at
stderr, so nothing the evaluated code prints can corrupt a reply).  Exits on
``None``, at the end of its input, or when its parent dies.
"""

from __future__ import annotations

import pickle
import sys
import time
from typing import Any


def plug_in_modules(case: Any, modules: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """What the release server imports for ``case`` (never this process): a ``module:Class`` learner's
    module, then each ``(name, file)`` of ``modules`` (the mechanisms' defining modules)."""
    names: list[tuple[str, str | None]] = list(modules)
    if ":" in str(case.learner):
        names.insert(0, (str(case.learner).split(":", 1)[0], None))
    return list(dict.fromkeys(names))


def third_party_modules(modules: list[tuple[str, str | None]]) -> tuple[str, ...]:
    """The names in ``modules`` (a case's mechanism-defining modules) that are not privbench's own: what a
    release server imports for the case beyond the built-in learners, the key it is reused by."""
    return tuple(sorted({name for name, _ in modules if name != "privbench" and not name.startswith("privbench.")}))


def score_saved(case: Any, files: list[str | None], errors: list[str | None], modules: list[tuple[str, str | None]],
                budget_kind: str | None, server: Any) -> list[tuple[dict[str, Any], float]]:
    """Per budget of ``case``: the scored Record fields of its saved mechanism, and the seconds taken.

    Every release is made by ``server`` (a :class:`~privbench.bench.remote_release.ReleaseServer`), from its
    own copy of the file.  No plug-in code runs here: a mechanism of a built-in type is loaded here and only
    describes itself; one of a third-party type is a
    :class:`~privbench.bench.remote_release.RemoteMechanism`, its description plain data from the server.
    ``budget_kind`` is the case's learner's declaration, read where it trained (None: read here, built-ins only).
    """
    from privbench.datasets.scenarios import make_scenario
    from privbench.learners import load_builtin_mechanism

    from .eval_reuse import reusing
    from .evaluators import evaluate, headline
    from .execute import score_budget
    from .records import error_text
    from .scores import score

    plug_ins = plug_in_modules(case, modules)
    sc = make_scenario(case.scenario, case.params)
    evaluate_case = reusing(evaluate)  # budgets whose mechanisms are one release: evaluated once (eval_reuse)
    out = []
    for budget, path, err in zip(case.budgets, files, errors):
        t0 = time.perf_counter()
        if path is None:
            out.append(({"status": "failed", "error": err}, 0.0))
            continue
        try:
            mech = load_builtin_mechanism(path)
            if mech is None:
                mech = server.remote(path, path, plug_ins)
            else:
                server.attach(mech, path, path, plug_ins)
        except Exception as exc:  # noqa: BLE001
            out.append(({"status": "failed", "error": "load: " + error_text(exc)}, time.perf_counter() - t0))
            continue
        try:
            fields = score_budget(case, sc, mech, budget, evaluate_case, headline, score, budget_kind)
        except Exception as exc:  # noqa: BLE001 - recorded, the case goes on
            fields = {"status": "failed", "error": "evaluate: " + error_text(exc)}
        if server.alive():
            server.drop(path)
        out.append((fields, time.perf_counter() - t0))
    return out


def import_evaluation(threads: int | None) -> None:
    """Import torch (``threads`` threads), the learners, theory and the evaluators: what a worker and its
    evaluator process need (the evaluator finds them done when it was forked from its worker)."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    from privbench.learners.registry import load_builtins

    load_builtins()  # never the entry-point plug-ins: no third-party code in an evaluator (nor in its fork)
    import privbench.theory.optimum  # noqa: F401

    from . import evaluators, scores  # noqa: F401
    from .records import provenance

    provenance()


def start_up(parent: int, threads: int | None) -> None:
    """Start-up of the evaluator process: ignore SIGINT, exit with its worker, import what it needs."""
    import signal
    import threading

    from privbench.learners.serve import watch_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run's process handles Ctrl-C
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()
    import_evaluation(threads)


def main(inbox: Any = None, replies: Any = None) -> None:  # pragma: no cover - exercised through EvaluatorProcess
    """Serve requests from ``inbox`` (default: stdin), replies to ``replies`` (default: a private copy of
    stdout); file descriptor 1 is pointed at stderr either way."""
    import os

    from privbench.learners.serve import private_stdout, quick_exit, requests

    from .remote_release import ReleaseServer

    if replies is None:
        replies = private_stdout()  # stray prints (Python or C) go to stderr, never into a reply
    else:
        os.dup2(2, 1)
    inbox = sys.stdin.buffer if inbox is None else inbox
    parent, threads = pickle.load(inbox)
    server = ReleaseServer(threads)  # its imports overlap ours
    start_up(parent, threads)
    server.wait_ready()
    pickle.dump("ready", replies)  # the imports are done: a case's clock may start
    replies.flush()
    for msg in requests(inbox):
        third_party = third_party_modules(plug_in_modules(msg[0], msg[3]))
        if not server.alive() or (server.third_party and server.third_party != third_party):
            # a release killed it, or it has imported another author's modules (which may have loaded the
            # bench into it, or patched what a release runs): a fresh one for this case
            server.close()
            server = ReleaseServer(threads)
        server.third_party = third_party
        try:
            reply: Any = score_saved(*msg, server=server)
        except Exception as exc:  # noqa: BLE001 - e.g. a scenario that no longer builds
            from .records import error_text

            reply = [({"status": "failed", "error": "evaluate: " + error_text(exc)}, 0.0)] * len(msg[0].budgets)
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()
    server.close()  # the release server first, then no interpreter teardown (learners.serve.quick_exit)
    quick_exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
