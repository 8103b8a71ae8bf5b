"""Part II's paper-scale tool (tools/run_relu_grid.py) on dask: settings, resume, a killed worker, the benchmark."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from markovlib import cli
from markovlib.richlazy.relu_batch import METRICS
from markovlib.richlazy.relu_grid import PAPER, problems, schedule, settings_check, train_grid

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "run_relu_grid.py"
TINY = ["--d", "10", "--n", "100", "--n-test", "200", "--n-tau", "3", "--n-delta", "3"]


def test_paper_settings_and_schedule():
    s = settings_check(PAPER)
    assert (s["d"], s["n"], s["h"], s["n_teacher"], s["n_test"]) == (100, 1000, 50, 3, 10_000)
    assert len(s["taus"]) == 17 and abs(s["taus"][0] - 0.1) < 1e-15 and abs(s["taus"][-1] - 10**0.3) < 1e-12
    assert s["deltas"][0] == -1.0 and s["deltas"][8] == 0.0 and s["deltas"][-1] == 1.0
    assert PAPER["seeds"] == list(range(100, 116)) and s["base_lr"] == 5e-3
    assert schedule(3000) == [0, 10, 20, 50, 100, 200, 500, 1000, 2000, 3000]
    assert schedule(100_000)[-3:] == [20_000, 50_000, 100_000] and schedule(5) == [0, 5]
    for bad, name in ((dict(h=5), "h"), (dict(taus=[0.0]), "taus"), (dict(d=0), "d"), (dict(base_lr=-1), "base_lr")):
        with pytest.raises(ValueError, match=name):
            settings_check(dict(PAPER, **bad))


def test_train_grid_is_the_batched_trainer_on_the_teacher_student_problems():
    s = dict(PAPER, d=6, n=30, n_test=40, taus=[0.1, 1.0], deltas=[-1.0, 0.0, 1.0])
    res = train_grid(s, [3, 4], [0, 10, 40])
    assert res["train_loss"].shape == (3, 2, 2, 3) and set(METRICS) <= set(res) and res["finite"].all()
    one = train_grid(s, [4], [0, 10, 40])
    for m in METRICS:
        assert np.max(np.abs(one[m][:, 0] - res[m][:, 1])) < 1e-12
    p = problems(s, [4])
    assert np.allclose(p["lr"], 5e-3 / np.array([0.1, 1.0])[:, None] ** 2)
    assert np.max(np.abs(res["test_loss"][0])) > 0 and np.all(res["hamming"][0] == 0)


def test_train_grid_dtype_is_the_steps_arithmetic():
    """settings["dtype"] (tools/run_relu_grid.py --dtype): float32 steps differ from float64 by float32 rounding, not
    by nothing and not by more; the metrics stay float64; a bad dtype names the argument."""
    s = dict(PAPER, d=6, n=30, n_test=40, taus=[0.1, 1.0], deltas=[-1.0, 0.0, 1.0])
    r64 = train_grid(s, [3], [0, 10, 40])
    r32 = train_grid(dict(s, dtype="float32"), [3], [0, 10, 40])
    rel = np.max(np.abs(r32["test_loss"][1:] - r64["test_loss"][1:]) / np.abs(r64["test_loss"][1:]))
    assert 0 < rel < 1e-4 and r32["test_loss"].dtype == np.float64
    assert settings_check(PAPER)["dtype"] == "float64"
    with pytest.raises(ValueError, match="dtype"):
        settings_check(dict(PAPER, dtype="float16"))


def _tool(args, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, str(TOOL), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def _check_store(out, seeds, steps):
    """The stored set: checksums, and every seed either complete or listed as failed."""
    manifest = json.loads((out / "manifest.json").read_text())
    prov = manifest["provenance"]
    for name, entry in prov["files"].items():
        import hashlib
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == entry["sha256"]
    assert prov["command"].startswith("python tools/run_relu_grid.py grid") and prov["seeds"] == seeds
    assert {"git", "cpu", "versions", "wall_seconds"} <= set(prov) and "commit" in prov["git"]
    z = np.load(out / "grid.npz")
    assert z["seeds"].tolist() == seeds and z["steps"][-1] == steps
    failed = {k for k, _ in manifest["failed_tasks"]}
    for i, seed in enumerate(seeds):
        if z["complete"][i]:
            assert np.all(np.isfinite(z["test_loss"][:, i])) and f"seed{seed}" not in failed
        else:  # never silently missing: flagged, NaN, and listed with its error
            assert np.all(np.isnan(z["test_loss"][:, i])) and f"seed{seed}" in failed
    return manifest, z


@pytest.mark.slow
def test_tool_on_a_local_cluster_stores_the_grid_and_resumes(tmp_path):
    args = ["grid", *TINY, "--seeds", "1-3", "--steps", "30", "--workers", "2", "--out", str(tmp_path / "out"),
            "--work", str(tmp_path / "work")]
    proc = _tool(args)
    text = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, text
    manifest, z = _check_store(tmp_path / "out", [1, 2, 3], 30)
    assert z["complete"].all() and manifest["failed_tasks"] == [] and manifest["provenance"]["complete"]
    direct = train_grid(dict(settings_check(dict(PAPER, d=10, n=100, n_test=200, taus=np.logspace(-1, 0.3, 3).tolist(),
                                                 deltas=[-1.0, 0.0, 1.0]))), [2], schedule(30))
    for m in METRICS:
        assert np.array_equal(z[m][:, 1], direct[m][:, 0]), m
    proc = _tool(args)  # the work folder holds every task: nothing is run again
    text = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0 and "3 tasks, 3 done before" in text, text


@pytest.mark.slow
@pytest.mark.parametrize("allowed_failures", [1, 0])
def test_a_killed_worker_loses_no_run(tmp_path, allowed_failures):
    """A real scheduler with two worker processes; one worker is killed while it trains a seed. With retries the
    lost seed is run again on the new worker and the set is complete; without, it is reported (exit status 1,
    listed in the manifest, flagged and NaN in the arrays), never silently missing."""
    import dask
    from dask.distributed import Client, LocalCluster

    seeds = list(range(1, 7))
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, Client(cluster) as client:
        proc = _tool(["grid", *TINY, "--seeds", "1-6", "--steps", "2500", "--scheduler", cluster.scheduler_address,
                      "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")])
        lost, t0 = None, time.time()
        while lost is None and time.time() - t0 < 60 and proc.poll() is None:
            busy = [w for w, keys in client.processing().items() if keys]
            if busy:
                time.sleep(0.5)  # well inside the task (each takes seconds)
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                lost = {f"seed{seeds[int(k.split('-')[1])]}" for k in client.processing()[busy[0]]}
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        text = proc.communicate(timeout=240)[0]
    assert lost, text
    manifest, z = _check_store(tmp_path / "out", seeds, 2500)
    if allowed_failures:  # the lost seeds ran again elsewhere
        assert proc.returncode == 0 and z["complete"].all() and manifest["failed_tasks"] == [], text
    else:
        assert proc.returncode == 1, text
        assert 1 <= len(manifest["failed_tasks"]) and {k for k, _ in manifest["failed_tasks"]} <= lost, (lost, text)
        assert all("KilledWorker" in err for _, err in manifest["failed_tasks"]), manifest["failed_tasks"]
        assert not manifest["provenance"]["complete"]


@pytest.mark.slow
def test_bench_relu_grid_quick_prints_its_ratio(capsys):
    t0 = time.perf_counter()
    assert cli.main(["bench", "relu-grid", "--quick"]) == 0
    seconds = time.perf_counter() - t0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith(("Fig. 1a size", "chapter size", "paper size"))]
    assert len(lines) == 3 and all("(x" in ln for ln in lines), out
    assert all(float(ln.split()[-1]) < 1e-12 for ln in lines), out   # batched = alone, to rounding
    assert seconds < 120
