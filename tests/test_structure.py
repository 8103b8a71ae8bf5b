"""The package's structure (issues 10 and 20): subpackages that mirror the book, an acyclic import graph between
modules and between subpackages, Parts II and III free of Part I's torch model, one way to import each name, light
training and integration, short modules."""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "markovlib"
MAX_LINES = 350
SUBPACKAGES = {"markov", "transformer", "richlazy", "topology", "beyond", "book", "numerics"}
TOP_LEVEL = {"__init__.py", "__main__.py", "cli.py"}


def modules():
    """Dotted name (relative to markovlib, e.g. "markov.flow"; "" for the package) -> path, for every module."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(importer, path, node_module, level):
    """The dotted target (relative to markovlib) of ``from <level dots><node_module> import ...`` in ``importer``."""
    is_package = path.name == "__init__.py"
    base = importer.split(".") if importer else []
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + (node_module.split(".") if node_module else []))


def import_graph():
    """module -> set of markovlib modules it imports, at any level (module, function, class, try blocks).

    ``from X import a`` counts as importing the module X.a where that is a module, else X itself."""
    mods = modules()
    graph = {}
    for name, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = _resolve(name, path, node.module, node.level)
                elif node.module and node.module.split(".")[0] == "markovlib":
                    base = ".".join(node.module.split(".")[1:])
                else:
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}" if base else alias.name
                    targets.append(sub if sub in mods else base)
            elif isinstance(node, ast.Import):
                targets = [".".join(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == "markovlib"]
            deps.update(t for t in targets if t in mods)
        deps.discard(name)
        deps.discard("")  # markovlib itself (its __version__)
        graph[name] = deps
    return graph


def _layer(mod):
    """The subpackage a module belongs to; ``book.specs`` (the chapters' declarations, a layer above the parts like
    the chapters themselves, which may read a part's stored facts) counts as its own layer "specs"."""
    return "specs" if mod == "book.specs" or mod.startswith("book.specs.") else mod.split(".")[0]


def subpackage_graph(graph):
    """Subpackage -> the other subpackages its modules import (``book.specs`` apart: see :func:`_layer`)."""
    out = {}
    layers = SUBPACKAGES | {"specs"}
    for mod, deps in graph.items():
        top = _layer(mod)
        if top in layers:
            out.setdefault(top, set()).update(_layer(d) for d in deps if _layer(d) in layers)
            out[top].discard(top)
    return out


def find_cycle(graph):
    """A cycle as a list of nodes, or None (depth-first search with colours)."""
    colour = {m: 0 for m in graph}
    stack = []

    def visit(m):
        colour[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if colour.get(d, 2) == 1:
                return stack[stack.index(d):] + [d]
            if colour.get(d, 2) == 0:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        colour[m] = 2
        return None

    for m in sorted(graph):
        if colour[m] == 0:
            found = visit(m)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles():
    # the check would fail on the cycle the package had (flow -> progress -> widgets -> flow)
    assert find_cycle({"flow": {"progress"}, "progress": {"widgets"}, "widgets": {"flow"}}) == [
        "flow", "progress", "widgets", "flow"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_resolver_reads_relative_imports():
    f = PACKAGE / "markov" / "flow.py"
    assert _resolve("markov.flow", f, "energy", 1) == "markov.energy"
    assert _resolve("markov.flow", f, "book.progress", 2) == "book.progress"
    assert _resolve("markov", PACKAGE / "markov" / "__init__.py", "chain", 1) == "markov.chain"


def test_top_level_is_the_package_face_and_the_subpackages_mirror_the_book():
    top_files = {p.name for p in PACKAGE.glob("*.py")}
    assert top_files == TOP_LEVEL, f"modules at the top level besides the package's face: {top_files - TOP_LEVEL}"
    dirs = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert dirs == SUBPACKAGES
    for sub in SUBPACKAGES:
        assert (PACKAGE / sub / "__init__.py").exists()
        nested = {p.name for p in (PACKAGE / sub).iterdir() if p.is_dir() and p.name != "__pycache__"}
        # the one nested package: book.specs, the chapters' declared parameters (one module per chapter)
        assert nested == ({"specs"} if sub == "book" else set()), f"{sub} holds folders {nested}"
    assert not any(p.is_dir() and p.name != "__pycache__" for p in (PACKAGE / "book" / "specs").iterdir())


def test_import_graph_is_acyclic_between_modules_counting_function_level_imports():
    graph = import_graph()
    assert {"markov.flow", "book.progress", "book.widgets", "transformer.training"} <= set(graph)
    assert "markov.flow" in graph["markov.drawings"] and "book.session" in graph["book.progress"]  # function level
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_import_graph_is_acyclic_between_subpackages():
    sub = subpackage_graph(import_graph())
    assert "book" in sub["markov"] and "numerics" in sub["markov"]
    assert find_cycle(sub) is None, f"subpackage cycle: {' -> '.join(find_cycle(sub))}"
    assert sub["numerics"] == set(), "shared numerics import nothing else of the package"
    assert sub["book"] <= {"numerics"}, "the book's machinery imports no part"


def test_parts_two_and_three_do_not_import_part_one():
    sub = subpackage_graph(import_graph())
    for part in ("richlazy", "topology"):
        assert not sub[part] & {"transformer", "markov"}, f"{part} imports Part I: {sub[part]}"


def test_one_way_to_import_each_name():
    """Subpackages' __init__ files import nothing (no re-exports), and no module re-exports a name it imports."""
    for sub in SUBPACKAGES:
        tree = ast.parse((PACKAGE / sub / "__init__.py").read_text())
        assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], f"{sub}/__init__ imports"
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        defined, imported, exported = set(), set(), set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    defined.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
                    if isinstance(target, ast.Name) and target.id == "__all__":
                        exported = {elt.value for elt in node.value.elts}
            elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("markovlib")):
                imported.update(a.asname or a.name for a in node.names)
        assert exported <= defined - imported, f"{name} exports names it does not define: {exported - defined}"
        assert "re-export" not in path.read_text(), f"{name} says it re-exports names"


def test_modules_are_short():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


LIGHT = r"""
import sys
import torch
torch.set_num_threads(1)
from markovlib.transformer.training import Trainer
t = Trainer(p=0.2, q=0.3, d=4, length=16, batch=2, steps=3, eval_every=0, eval_batches=1, progress=True)
t.train()
from markovlib.markov.flow import integrate_batch
res = integrate_batch([0.5, 1.0], [-0.3, -1.0], 0.9, 0.9, progress=True)
assert res.outcome.shape == (2,)
from markovlib.transformer.runs import train_many
train_many([dict(p=0.2, q=0.3, d=4, length=8, batch=2, steps=2, eval_every=0, eval_batches=1)], progress=True)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("matplotlib", "ipywidgets"))
print("HEAVY", heavy)
"""


@pytest.mark.slow
@pytest.mark.parametrize("batch", ["1", None])
def test_training_and_integration_load_neither_matplotlib_nor_ipywidgets(batch):
    env = {k: v for k, v in os.environ.items() if k != "MARKOVLIB_BATCH"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)  # this checkout's markovlib, as in the parent process
    if batch is not None:  # a batch run (nbval, sweeps); else as from a terminal (IPython is asked for a kernel)
        env["MARKOVLIB_BATCH"] = batch
    done = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "HEAVY []", done.stdout
