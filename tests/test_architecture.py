"""The house rules, checked on the installed package.

Walks the source of every module of the installed ``privbench`` namespace
(datasets, theory, learners, bench, testing) and checks what the issue tracker and
DESIGN.md ask of its shape: no import cycle (imports inside functions count),
no underscore name imported from another module, the layer rules, no module over
400 lines and no function over 80 lines.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGES = ("privbench.datasets", "privbench.theory", "privbench.learners", "privbench.bench",
            "privbench.testing")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module = field(repr=False)
    lines: int = 0


def _package_dirs() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        spec = importlib.util.find_spec(pkg)
        assert spec is not None and spec.submodule_search_locations, f"{pkg} is not installed"
        out[pkg] = Path(list(spec.submodule_search_locations)[0])
    return out


def _collect() -> dict[str, Module]:
    dirs = _package_dirs()
    mapped = {d.resolve() for d in dirs.values()}
    mods: dict[str, Module] = {}
    for pkg, root in dirs.items():
        for path in sorted(root.rglob("*.py")):
            # a folder mapped to another package (bench/testing -> privbench.testing) is walked there
            inner = [p.resolve() for p in path.parents if p.resolve() != root.resolve()
                     and root.resolve() in p.resolve().parents]
            if any(p in mapped for p in inner):
                continue
            rel = path.relative_to(root).with_suffix("").parts
            is_package = rel[-1] == "__init__"
            parts = rel[:-1] if is_package else rel
            name = ".".join((pkg, *parts))
            text = path.read_text(encoding="utf-8")
            mods[name] = Module(name, path, is_package, ast.parse(text), len(text.splitlines()))
    return mods


MODULES = _collect()


def _imports(mod: Module) -> list[tuple[str, str]]:
    """(target module, imported name) for every privbench import anywhere in ``mod``."""
    out = []
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.name.split(".") if mod.is_package else mod.name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("privbench"):
                out.extend((target, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((a.name, "") for a in node.names if a.name.startswith("privbench"))
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, mod in MODULES.items():
        for target, imported in _imports(mod):
            dst = f"{target}.{imported}" if f"{target}.{imported}" in MODULES else target
            # importing a.b.c runs a and a.b first
            chain = dst.split(".")
            for i in range(2, len(chain) + 1):
                node = ".".join(chain[:i])
                if node in MODULES and node != name and not name.startswith(node + "."):
                    graph[name].add(node)
    return graph


def _external(mod: Module) -> set[str]:
    out = set()
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_walk_sees_every_package():
    for pkg in PACKAGES:
        assert pkg in MODULES
    assert len(MODULES) > 40


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_underscore_name_imported_from_another_module():
    bad = [f"{m.name} imports {name} from {target}"
           for m in MODULES.values() for target, name in _imports(m)
           if name.startswith("_") and name != "__version__"]
    assert bad == []


LAYER_FORBIDDEN = {
    "datasets": {"theory", "learners", "bench", "testing"},
    "theory": {"learners", "bench", "testing"},
    "learners": {"theory", "bench", "testing"},
}


def test_layer_rules():
    bad = []
    for name, targets in _graph().items():
        layer = name.split(".")[1]
        for t in targets:
            if t.split(".")[1] in LAYER_FORBIDDEN.get(layer, ()):
                bad.append(f"{name} imports {t}")
    for m in MODULES.values():
        layer = m.name.split(".")[1]
        ext = _external(m)
        if layer in ("datasets", "theory") and "torch" in ext:
            bad.append(f"{m.name} imports torch")
        if layer == "datasets" and "cvxpy" in ext:
            bad.append(f"{m.name} imports cvxpy")
    assert bad == []


def test_no_module_over_400_lines():
    big = {m.name: m.lines for m in MODULES.values() if m.lines > MAX_MODULE_LINES}
    assert big == {}


def test_no_function_over_80_lines():
    long = []
    for m in MODULES.values():
        for node in ast.walk(m.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{m.name}.{node.name}: {n}")
    assert long == []


def test_no_global_rng():
    """Randomness enters through explicit generators: no np.random.seed/np.random.<draw>, no torch.manual_seed."""
    bad = []
    draws = {"seed", "rand", "randn", "randint", "random", "choice", "normal", "uniform", "permutation", "shuffle"}
    for m in MODULES.values():
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                owner = node.value
                if (isinstance(owner.value, ast.Name) and owner.value.id in ("np", "numpy")
                        and owner.attr == "random" and node.attr in draws):
                    bad.append(f"{m.name}: np.random.{node.attr}")
            if isinstance(node, ast.Attribute) and node.attr == "manual_seed":
                if isinstance(node.value, ast.Name) and node.value.id == "torch":
                    bad.append(f"{m.name}: torch.manual_seed")
    assert bad == []


@pytest.mark.parametrize("pkg", ["privbench.datasets", "privbench.theory"])
def test_lower_layers_import_without_torch(pkg):
    import subprocess
    import sys

    code = f"import sys, {pkg}; sys.exit(1 if 'torch' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
