"""The package's structure (issue 10): an acyclic import graph, light training and integration, short modules."""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "markovlib"
MAX_LINES = 350


def import_graph():
    """module -> set of markovlib modules it imports, at any level (module, function, class, try blocks)."""
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module is None:  # from . import a, b
                    deps.update(alias.name for alias in node.names if alias.name in modules)
                elif node.level == 1:  # from .a import x
                    deps.add(node.module.split(".")[0])
                elif node.level == 0 and node.module and node.module.split(".")[0] == "markovlib":
                    parts = node.module.split(".")
                    if len(parts) > 1:
                        deps.add(parts[1])
                    else:
                        deps.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == "markovlib" and len(parts) > 1:
                        deps.add(parts[1])
        deps.discard(name)
        graph[name] = {d for d in deps if d in modules and d != "__init__"}
    return graph


def find_cycle(graph):
    """A cycle as a list of modules, or None (depth-first search with colours)."""
    colour = {m: 0 for m in graph}
    stack = []

    def visit(m):
        colour[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if colour[d] == 1:
                return stack[stack.index(d):] + [d]
            if colour[d] == 0:
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


def test_import_graph_is_acyclic_counting_function_level_imports():
    graph = import_graph()
    assert {"flow", "progress", "widgets", "trainer", "training", "benchmarks"} <= set(graph)
    assert "flow" in graph["drawings"] and "session" in graph["progress"]  # function-level imports are seen
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_modules_are_short():
    long = {p.name: n for p in PACKAGE.glob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


LIGHT = r"""
import sys
import torch
torch.set_num_threads(1)
from markovlib.trainer import Trainer
t = Trainer(p=0.2, q=0.3, d=4, length=16, batch=2, steps=3, eval_every=0, eval_batches=1, progress=True)
t.train()
from markovlib.flow import integrate_batch
res = integrate_batch([0.5, 1.0], [-0.3, -1.0], 0.9, 0.9, progress=True)
assert res.outcome.shape == (2,)
from markovlib.runs import train_many
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
