"""The paper report: each experiment of a suite beside what its source paper claims.

``privbench report DIR`` writes this report (instead of the generic one) when the
results in DIR come from a suite whose experiments carry ``paper:`` blocks (the
shipped ``paper`` suite).  For every experiment it shows the paper's claim
(figure/table), our optimum at each budget, our learned points with 95%
t-intervals over seeds, the gap, the wall time on this machine, and the
sentence on where and why we differ (the block's ``differs``); up front a
summary of the median and worst gap per learner x experiment.  Experiments
with a special shape get their own tables and figures, named in their
``paper: {sections: [...]}`` block (:mod:`.sections`):

``gap-table``           learned (beta0, beta1, gamma0, gamma1) and exact MAP accuracy per D beside
                        GAP Tables 2-5's printed learned / theory columns (bench/paper_reference.yaml)
``per-component``       per-component distortion and leakage, learned vs Prop. 2 (PPAN appendix H)
``sample-complexity``   gap vs training-set size split into finite-sample (the plug-in's gap)
                        and optimisation (learner minus plug-in, paired by repetition) parts
``filter-table1``       the generative filter's Table 1 beside our accuracies
``filter-table2``       its Table 2 (UCI-Adult: VAE, VFAE, LMIFR, the filter) beside our accuracies
``filter-table3``       its Table 3 (UCI-Abalone, per KL budget b) beside our accuracies
and, from the rows themselves:
``evaluators: mismatch``  the training adversary's estimate vs fresh attackers of other architectures
no known optimum        attacker and utility accuracies per label, sample releases
``protocol: two-user``  the two users' private and utility accuracies

A suite file that cannot be read, or a ``paper:`` block naming an unknown
section, is an InputError (never a silent fall-back to the generic report).
Blocks are rendered twice from one list by :mod:`.render`: Markdown with PNGs
in a folder beside it, and a self-contained HTML file (base64 PNGs).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from privbench.datasets.errors import InputError

from .overview import glance_blocks, panel_blocks, ranking_blocks, stamp
from .paper_tables import has_bound, obs_label, optimum_table, timing_by_experiment, variant_labels
from .ranking import ranking_frame
from .render import Block, Style, render_html, render_markdown
from .sections import SECTIONS, labelled_blocks, mismatch_blocks, mismatch_overview, two_user_blocks

STYLE = Style(css="", na_rep="")


def suite_metadata(df: pd.DataFrame, source: str | None = None) -> tuple[str, dict[str, dict[str, Any]], list[str]]:
    """(suite name, experiment -> its ``paper:`` block, experiment order) of the suite the records came from.

    ``source``: a suite name or YAML path; default: the suite named in the records.
    Empty metadata when the suite is not a shipped one or a file (an ad-hoc run) or has no ``paper:``
    blocks.  InputError when the suite file cannot be parsed or a ``paper:`` block is malformed.
    """
    import yaml

    name = source or (str(df["suite"].dropna().iloc[0]) if "suite" in df and df["suite"].notna().any() else "")
    path = find_suite_file(name)
    if path is None:  # an ad-hoc run, or a suite file no longer there: the generic report
        return name, {}, []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"suite file {str(path)!r} cannot be read for the paper report "
                         f"({' '.join(str(exc).split())[:200]})") from None
    meta, order = {}, []
    for exp in (data.get("experiments") or []) if isinstance(data, dict) else []:
        if isinstance(exp, dict) and "paper" in exp:
            meta[str(exp.get("name"))] = check_paper_block(str(exp.get("name")), exp["paper"])
            order.append(str(exp.get("name")))
    return name, meta, order


def find_suite_file(name: str) -> Path | None:
    """The YAML file of suite ``name`` (a shipped suite or a path; ``SUITE-smoke`` is SUITE's); None if none."""
    from ..suites import suite_path

    for candidate in (name, name[: -len("-smoke")] if name.endswith("-smoke") else None):
        if not candidate:
            continue
        try:
            return Path(suite_path(candidate)[1])
        except InputError:
            continue
    return None


def check_paper_block(experiment: str, block: Any) -> dict[str, Any]:
    """An experiment's ``paper:`` block, checked: a mapping whose ``sections`` are known section kinds."""
    allowed = ", ".join(SECTIONS)
    if not isinstance(block, dict):
        raise InputError(f"experiment {experiment!r}: paper={block!r} must be a mapping (keys figure, claim, "
                         f"differs, sections; sections allowed: {allowed})")
    sections = block.get("sections", [])
    if not isinstance(sections, list) or any(s not in SECTIONS for s in sections):
        raise InputError(f"experiment {experiment!r}: paper.sections={sections!r} is not a list of known section "
                         f"kinds (allowed: {allowed})")
    return dict(block)


def reference_values() -> dict[str, Any]:
    """The source papers' printed numbers (bench/paper_reference.yaml)."""
    import yaml

    ref = resources.files("privbench.bench") / "paper_reference.yaml"
    return yaml.safe_load(ref.read_text(encoding="utf-8")) if ref.is_file() else {}


def experiment_blocks(name: str, g: pd.DataFrame, meta: dict[str, Any], ref: dict[str, Any],
                      rank: pd.DataFrame) -> list[Block]:
    """Every block of one experiment's section (``rank``: :func:`~.ranking.ranking_frame` of all rows)."""
    title = f"{name}: {meta.get('figure', '')}".rstrip(": ")
    out = [Block("h2", title)]
    if meta.get("claim"):
        out.append(Block("p", f"**Paper claim.** {meta['claim']}"))
    first = g.iloc[0]
    learners = ", ".join(sorted(g["learner"].unique()))
    n_train = ", ".join(str(int(x)) for x in sorted(g["n_train"].unique()))
    ok = g[g["status"] == "ok"]
    out.append(Block("p", f"**Set-up.** scenario {', '.join(sorted(g['scenario_id'].unique()))}; observation "
                          f"{', '.join(sorted(set(map(obs_label, g['observation']))))}; privacy "
                          f"{', '.join(sorted(g['privacy'].unique()))}; learners {learners}; training samples "
                          f"{n_train}; fresh evaluation samples {int(first['n_eval'])}; seeds per point "
                          f"{int(g['rep'].nunique())}. {len(ok)} of {len(g)} rows ok; wall time of its cases "
                          f"{g['wall_time_s'].sum():.0f} core-seconds on this machine."))
    bad = g[g["status"] != "ok"]
    if not bad.empty:
        errs = "; ".join(sorted({f"{r.learner}: {str(r.error)[:160]}" for r in bad.itertuples()}))
        out.append(Block("p", f"**Failures.** {len(bad)} row(s): {errs}"))
    if has_bound(g):
        out += [Block("h3", "Our optimum"), Block("table", table=optimum_table(g))]
    special = special_blocks(name, g, meta, ref)
    if has_bound(g) and not any(SECTIONS[s].replaces_points for s in meta.get("sections", [])):
        mine = rank[rank["experiment"] == name] if not rank.empty else rank
        out += panel_blocks(g, mine, heading="h3")
    out += special
    out.append(Block("p", f"**Where and why we differ.** {meta.get('differs') or '(not written yet)'}"))
    return out


def special_blocks(name: str, g: pd.DataFrame, meta: dict[str, Any], ref: dict[str, Any]) -> list[Block]:
    """The sections an experiment's rows call for (two-user protocol, labelled data, mismatch study)
    and those its ``paper:`` block names, in that order (labelled, named, mismatch)."""
    out: list[Block] = []
    if g["protocol"].astype(str).eq("two-user").any() if "protocol" in g else False:
        return two_user_blocks(g, ref)
    if not has_bound(g):
        out += labelled_blocks(name, g, ref)
    for kind in meta.get("sections", []):
        out += SECTIONS[kind].render(name, g, ref)
    if g["evaluators"].astype(str).eq("mismatch").any() if "evaluators" in g else False:
        out += mismatch_blocks(name, g)
    return out


def paper_blocks(df: pd.DataFrame, meta: dict[str, dict[str, Any]], order: list[str],
                 manifests: list[dict[str, Any]] | None = None, title: str = "") -> list[Block]:
    ref = reference_values()
    df = df.copy()
    df["learner"] = variant_labels(df)
    names = [n for n in order if n in set(df["experiment"])] + sorted(set(df["experiment"]) - set(order))
    rank = ranking_frame(df, names)
    out = glance_blocks(df, rank, "Experiments on data without a known optimum (images, hypothesis testing) are "
                                  "not in the heatmap; their sections give attacker and utility accuracies.")
    out += ranking_blocks(rank)
    runs = [m for m in (manifests or []) if m.get("wall_s") is not None]
    overview = mismatch_overview(df)
    if not overview.empty:
        out += [Block("h2", "Attacker mismatch across every experiment"),
                Block("p", "Per learner and experiment: its own training adversary's final estimate (on training "
                           "data; accuracy for MAP experiments, nats for MI) against the independent measurement "
                           "of the same release (exact where the mechanism's form allows it, else the best fresh "
                           "lower-bound attacker; the evaluator and leakage-is columns say which, one row each). "
                           "A positive under-estimate means the learner's adversary reported more "
                           "privacy than the release has. Mean over seeds and budgets; worst over points."),
                Block("table", table=overview)]
    out += [Block("h2", "Time per experiment")] + run_time_blocks(runs)
    out.append(Block("table", table=timing_by_experiment(df)))
    for name in names:
        out += experiment_blocks(name, df[df["experiment"] == name], meta.get(name, {}), ref, rank)
    return out


def run_time_blocks(runs: list[dict[str, Any]]) -> list[Block]:
    """The total wall time of the runs that wrote the records (from their manifests)."""
    if not runs:
        return []
    tot = sum(float(m["wall_s"]) for m in runs)
    jobs = sorted({str(m.get("jobs")) for m in runs})
    devs = sorted({str(m.get("device")) for m in runs})
    return [Block("p", f"**Run time.** {len(runs)} run(s) of `privbench run` wrote these results in "
                       f"{tot:.0f} s wall time in total ({tot / 60:.1f} min; jobs {', '.join(jobs)}, device "
                       f"{', '.join(devs)}; host {runs[-1].get('host', '?')}, commit "
                       f"{str(runs[-1].get('git_commit', '?'))[:12]}).")]


def write_paper_report(df: pd.DataFrame, meta: dict[str, dict[str, Any]], order: list[str],
                       markdown: str | Path | None, html_path: str | Path | None,
                       manifests: list[dict[str, Any]] | None = None, title: str = "privbench: the papers, "
                       "theory versus learned", command: str = "") -> list[Path]:
    """Write the paper report (Markdown with figures/ beside it, and/or self-contained HTML)."""
    blocks = paper_blocks(df, meta, order, manifests)
    intro = ("Every experiment of the four source papers (PPAN, GAP, the chi-square sanitizer, the generative "
             "latent filter) regenerated by privbench: the exact optimum from theory/, learned mechanisms trained "
             "from samples only, and independent evaluators (never the learner's own adversary). Reproduce with "
             "`privbench run --suite paper` then `privbench report results/runs/paper`.")
    out, st = [], stamp(df, command)
    if markdown:
        out.append(render_markdown(blocks, Path(markdown), title, intro, STYLE, st))
    if html_path:
        out.append(render_html(blocks, Path(html_path), title, intro, STYLE, st))
    return out
