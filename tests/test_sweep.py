"""Papermill sweeps on dask and the results-sidecar convention."""
import csv
import json

import nbformat
import numpy as np
import pytest
from notebooks import write_notebook

from markovlib import cli
from markovlib.book.sweep import RESULTS_ENV, grid_points, parse_grid, parse_value, record_results, run_sweep


def tiny_notebook(path):
    return write_notebook(
        path, "x = 1\ny = 0.5\nlabel = 'a'",
        "from markovlib.book.sweep import record_results\n"
        "if x == 2 and y == 1.5:\n"
        "    raise RuntimeError('deliberate failure at x=2, y=1.5')\n"
        "record_results({'z': x * y, 'tag': f'{label}{x}', 'big': x > 1})")


def read_rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_sweep_local_cluster_with_a_failure(tmp_path, capsys):
    nb = tiny_notebook(tmp_path / "tiny.ipynb")
    out = tmp_path / "sweep"
    code = cli.main(["sweep", str(nb), "--grid", "x=1,2", "--grid", "y=0.5,1.5", "--out", str(out),
                     "--workers", "2", "--timeout", "120"])
    assert code == 1
    printed = capsys.readouterr().out
    assert "4 run(s): 3 ok, 1 failed" in printed and "deliberate failure" in printed
    rows = read_rows(out / "results.csv")
    assert [(r["x"], r["y"]) for r in rows] == [("1", "0.5"), ("1", "1.5"), ("2", "0.5"), ("2", "1.5")]
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "failed"]
    assert [r["z"] for r in rows[:3]] == ["0.5", "1.5", "1.0"]
    assert [r["tag"] for r in rows[:3]] == ["a1", "a1", "a2"]
    assert rows[3]["z"] == "" and rows[3]["error"] == "RuntimeError: deliberate failure at x=2, y=1.5"
    assert all(r["error"] == "" for r in rows[:3])
    # the executed notebooks are kept; the failed one shows the error
    executed = nbformat.read(rows[3]["notebook"], as_version=4)
    assert any(o.get("ename") == "RuntimeError" for c in executed.cells for o in c.get("outputs", []))


@pytest.mark.slow
def test_sweep_existing_scheduler_all_ok(tmp_path):
    from dask.distributed import LocalCluster

    nb = tiny_notebook(tmp_path / "tiny.ipynb")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        rows = run_sweep(nb, ["label=b", "x=3"], tmp_path / "out", scheduler=cluster.scheduler_address,
                         verbose=False)
    assert len(rows) == 1 and rows[0]["status"] == "ok"
    assert rows[0]["z"] == 1.5 and rows[0]["tag"] == "b3" and rows[0]["big"] is True
    with pytest.raises(ValueError, match="scheduler"):
        run_sweep(nb, [], tmp_path / "bad", scheduler="nonsense")
    with pytest.raises(ValueError, match="notebook"):
        run_sweep(tmp_path / "missing.ipynb", [], tmp_path / "bad")
    with pytest.raises(ValueError, match="workers"):
        run_sweep(nb, [], tmp_path / "bad", workers=0)


def test_parse_values_and_grid():
    assert parse_value("3") == 3 and isinstance(parse_value("3"), int)
    assert parse_value("0.5") == 0.5 and parse_value("1e-3") == 1e-3
    assert parse_value("true") is True and parse_value("False") is False
    assert parse_value("guideline") == "guideline"
    grid = parse_grid(["p=0.2,0.5", "init=standard,guideline", "seed=0"])
    assert grid == {"p": [0.2, 0.5], "init": ["standard", "guideline"], "seed": [0]}
    points = grid_points(grid)
    assert len(points) == 4 and points[1] == {"p": 0.2, "init": "guideline", "seed": 0}
    assert grid_points({}) == [{}]
    for bad in (["p"], ["p="], ["p=1,,2"], ["1p=2"], ["p=1", "p=2"]):
        with pytest.raises(ValueError, match="grid"):
            parse_grid(bad)


def test_record_results(tmp_path, monkeypatch):
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    assert record_results({"a": 1}) == {"a": 1}  # no-op without the variable
    target = tmp_path / "r.json"
    monkeypatch.setenv(RESULTS_ENV, str(target))
    record_results({"a": np.float64(0.25), "n": np.int64(3), "ok": np.bool_(True)})
    record_results({"name": "x", "a": 0.5})
    assert json.loads(target.read_text()) == {"a": 0.5, "n": 3, "ok": True, "name": "x"}
    with pytest.raises(ValueError, match="results\\['v'\\]"):
        record_results({"v": [1, 2]})
    with pytest.raises(ValueError, match="results"):
        record_results([1])
