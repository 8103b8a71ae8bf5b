"""Every paper-scale tool runs its grid through dask.distributed (markovlib.book.runner -> markovlib.book.cluster) and
writes a manifest with the provenance block; shrunken grids, two worker processes."""
import ast
import csv
import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"


@pytest.fixture
def tool(monkeypatch):
    monkeypatch.syspath_prepend(str(TOOLS))

    def load(name):
        return importlib.reload(importlib.import_module(name))
    return load


def _checksums_ok(out, manifest):
    for name, entry in manifest["provenance"]["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == entry["sha256"]
    assert {"command", "seeds", "versions", "git", "cpu", "wall_seconds"} <= set(manifest["provenance"])


def test_every_tool_uses_the_shared_dask_engine():
    for path in sorted(TOOLS.glob("run_*.py")):
        if path.name == "run_ci_params.py":  # runs chapters for CI, not a stored grid
            continue
        text = path.read_text()
        assert "run_grid(" in text or "run_all(" in text, f"{path.name} does not run its grid on dask"
        assert "Provenance(" in text, f"{path.name} writes no provenance block"
    shared = (TOOLS.parent / "markovlib" / "book" / "runner.py").read_text()
    assert "from .cluster import run_tasks" in shared and "ThreadPoolExecutor" not in shared


def test_tools_import_the_shared_code_from_the_package_without_sys_path():
    """The tools' shared code is markovlib.book.runner and markovlib.book.provenance (issue 34): no tool puts a
    folder on sys.path, and tools/ holds no library module: what a tool imports from tools/ is another tool
    (run_slice_prefix reads the settings of the sets it re-runs from their tools; Python puts the script's folder
    on sys.path). The tools run as ``python tools/<tool>.py`` from the repository root, markovlib installed
    editable."""
    assert not (TOOLS / "stored_runs.py").exists()
    helpers = {p.stem for p in TOOLS.glob("*.py") if not p.name.startswith("run_")}
    for path in sorted(TOOLS.glob("*.py")):
        text = path.read_text()
        assert "sys.path" not in text, f"{path.name} changes sys.path"
        assert "stored_runs" not in text, f"{path.name} names tools/stored_runs.py"
        imported = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                imported.add(node.module.split(".")[0])
        assert not imported & helpers, f"{path.name} imports a helper of tools/: {imported & helpers}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in TOOLS.glob("run_*.py")))
def test_every_tool_runs_as_a_script_from_the_repository_root(name):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # this checkout's markovlib, as when installed
    done = subprocess.run([sys.executable, f"tools/{name}", "--help"], cwd=TOOLS.parent, capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith(f"usage: {name}")


@pytest.mark.slow
def test_run_beyond_on_a_local_cluster(tool, tmp_path, monkeypatch):
    rb = tool("run_beyond")
    monkeypatch.setattr(rb, "GRID", {3: [0.4]})
    monkeypatch.setattr(rb, "SEEDS", [0])
    monkeypatch.setattr(rb, "SETTINGS", dict(rb.SETTINGS, steps=4, eval_every=2, eval_batch=8, batch=4, length=16))
    assert rb.main(["--out", str(tmp_path), "--workers", "2"]) == 0
    with open(tmp_path / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["K"], r["p"], r["init"]) for r in rows] == [("3", "0.4", "standard"), ("3", "0.4", "guideline_like")]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["runs"] == manifest["runs_planned"] == 2 and manifest["failed_runs"] == []
    assert manifest["provenance"]["complete"] and "torch" in manifest["versions"]
    _checksums_ok(tmp_path, manifest)


@pytest.mark.slow
def test_run_beyond_phase_on_a_local_cluster(tool, tmp_path, monkeypatch):
    rb = tool("run_beyond")
    monkeypatch.setattr(rb, "GRID", {3: [0.4]})
    monkeypatch.setattr(rb, "SEEDS_PHASE", [0])
    monkeypatch.setattr(rb, "PHASE_SETTINGS", dict(rb.PHASE_SETTINGS, steps=4, eval_every=2, eval_batch=8, batch=4,
                                                   length=16))
    assert rb.main(["--part", "phase", "--out", str(tmp_path), "--workers", "2"]) == 0
    assert not (tmp_path / "runs.csv").exists() and not (tmp_path / "manifest.json").exists()
    with open(tmp_path / "phase_runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["K"], r["p"], r["optimizer"], r["tied"], r["init"]) for r in rows] == [
        ("3", "0.4", "adam", "1", "standard"), ("3", "0.4", "adam", "1", "guideline_like"),
        ("3", "0.4", "sgd", "1", "standard"), ("3", "0.4", "sgd", "1", "guideline_like"),
        ("3", "0.4", "adam", "0", "standard")]
    assert [float(r["lr"]) for r in rows] == [2e-3, 2e-3, rb.SGD_LR, rb.SGD_LR, 2e-3]
    assert all(r["finite"] == "1" for r in rows)
    with open(tmp_path / "phase_curves.csv") as fh:
        curves = list(csv.DictReader(fh))
    assert {"optimizer", "tied"} <= set(curves[0]) and [c["step"] for c in curves] == ["0", "2", "4"] * 5
    manifest = json.loads((tmp_path / "manifest_phase.json").read_text())
    assert manifest["runs"] == manifest["runs_planned"] == 5 and manifest["failed_runs"] == []
    assert manifest["seeds"] == [0] and manifest["settings"]["steps"] == 4 and len(manifest["arms"]) == 5
    assert manifest["provenance"]["complete"] and "torch" in manifest["versions"]
    assert set(manifest["provenance"]["files"]) == {"phase_runs.csv", "phase_curves.csv"}
    _checksums_ok(tmp_path, manifest)


@pytest.mark.slow
def test_run_fig4_on_a_local_cluster(tool, tmp_path, monkeypatch):
    from markovlib.transformer.config import recipe
    from markovlib.transformer.train_cli import cli_arguments

    f4 = tool("run_fig4")
    monkeypatch.setattr(f4, "SEEDS", [0])
    monkeypatch.setattr(f4, "CHAINS", [(0.5, 0.8)])
    monkeypatch.setattr(f4, "INITS", {"standard": ("two_token", "standard"), "guideline": ("binary", "guideline")})
    monkeypatch.setattr(f4, "RECIPE", cli_arguments(recipe("authors_fig4", steps=3, length=16, eval_every=1,
                                                           eval_batches=1)))
    argv = ["--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"), "--workers", "2"]
    monkeypatch.setattr(sys, "argv", ["tools/run_fig4.py", *argv])
    assert f4.main(argv) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["runs"] == [[0.5, 0.8, "standard", 0], [0.5, 0.8, "guideline", 0]] and manifest["failed_runs"] == []
    assert "torch" in manifest["versions"] and len(manifest["commands"]) == 2
    _checksums_ok(tmp_path / "out", manifest)
    with open(tmp_path / "out" / "curves.csv") as fh:
        assert sorted({r["step"] for r in csv.DictReader(fh)}) == ["0", "1", "2", "3"]  # per run: steps 0 to 3
    # a second part of the set: more seeds, files of their own, the first part untouched
    before = (tmp_path / "out" / "curves.csv").read_bytes()
    more = [*argv, "--seeds", "1-2", "--tag", "more"]
    assert f4.main(more) == 0
    manifest = json.loads((tmp_path / "out" / "manifest_more.json").read_text())
    assert manifest["seeds"] == [1, 2] and [r[3] for r in manifest["runs"]] == [1, 1, 2, 2]
    assert (tmp_path / "out" / "curves.csv").read_bytes() == before
    _checksums_ok(tmp_path / "out", manifest)


@pytest.mark.slow
def test_run_lowrank_perturbed_part_on_a_local_cluster(tool, tmp_path, monkeypatch):
    from markovlib.transformer.config import recipe

    lr = tool("run_lowrank")
    monkeypatch.setattr(lr, "STEPS", 3)
    monkeypatch.setattr(lr, "EVAL_EVERY", 1)
    monkeypatch.setattr(lr, "recipe", lambda name, **kw: recipe(name, **{**kw, "steps": 3, "length": 16}))
    argv = ["--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"), "--workers", "2", "--seeds", "0",
            "--noise", "1e-5", "--tag", "perturbed"]
    monkeypatch.setattr(sys, "argv", ["tools/run_lowrank.py", *argv])
    assert lr.main(argv) == 0
    manifest = json.loads((tmp_path / "out" / "manifest_perturbed.json").read_text())
    assert manifest["runs"] == [["rank_one_noise", "sgd_5", 0], ["rank_one_noise", "adamw", 0]]
    assert manifest["init_noise"] == 1e-5 and all("--init rank_one " in c and "--init-noise 1e-05" in c
                                                  for c in manifest["commands"])
    _checksums_ok(tmp_path / "out", manifest)
    with open(tmp_path / "out" / "final_perturbed.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and all(0 < float(r["fraction_W_1"]) < 1 for r in rows)


@pytest.mark.slow
def test_run_escape_on_a_local_cluster(tool, tmp_path, monkeypatch):
    esc = tool("run_escape")
    monkeypatch.setattr(esc, "SEEDS", [0])
    monkeypatch.setattr(esc, "CHAINS", [(0.75, 0.75)])
    monkeypatch.setattr(esc, "LRS", {"sgd": (1.0,), "adam": (2e-3,)})
    monkeypatch.setattr(esc, "STEPS", 6)
    monkeypatch.setattr(esc, "EVAL_EVERY", 3)
    argv = ["--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"), "--workers", "2"]
    assert esc.main(argv) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["runs"] == [[0.75, 0.75, "adam", 0.002, 0], [0.75, 0.75, "sgd", 1.0, 0]]
    assert manifest["failed_runs"] == [] and manifest["provenance"]["complete"]
    _checksums_ok(tmp_path / "out", manifest)
    with open(tmp_path / "out" / "runs.csv") as fh:
        assert [(r["optimizer"], r["steps"], r["escape_step"]) for r in csv.DictReader(fh)] == [
            ("adam", "6", ""), ("sgd", "6", "")]  # six steps: no run leaves the plateau
    import pandas as pd

    curves = pd.read_csv(tmp_path / "out" / "curves.csv.gz")
    assert curves.groupby("optimizer").step.apply(list).to_dict() == {"adam": [0, 3, 6], "sgd": [0, 3, 6]}
    assert curves[["e", "w", "energy"]].notna().all().all()
