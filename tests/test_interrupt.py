"""Interruptions lose nothing (issue 9.7): a training run killed with SIGKILL between two checkpoints resumes
exactly; a sweep whose notebook kernel or worker process dies reports that point as failed and finishes the rest."""
import csv
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from notebooks import write_notebook

from markovlib.book.sweep import run_sweep

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
STEPS, EVERY = 1500, 100
ARGS = ["train", "--p", "0.3", "--q", "0.4", "--steps", str(STEPS), "--d", "4", "--length", "16", "--batch", "4",
        "--eval-every", "50", "--eval-batches", "1", "--checkpoint-every", str(EVERY), "--seed", "5",
        "--no-progress", "--device", "cpu"]
COLUMNS = ("step", "lr", "train_loss", "grad_norm", "eval_loss", "context_coefficient")  # not elapsed_s


def cli(*argv):
    return [sys.executable, "-m", "markovlib", *argv]


def curve(out):
    with open(out / "metrics.csv") as fh:
        return [tuple(r[c] for c in COLUMNS) for r in csv.DictReader(fh)]


@pytest.mark.slow
def test_sigkill_between_checkpoints_then_resume_gives_the_uninterrupted_losses(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    proc = subprocess.Popen(cli(*ARGS, "--out", str(run)), env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    checkpoint = run / "checkpoint.pt"
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)  # right after the first checkpoint landed: between two checkpoints
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    assert not (run / "summary.json").exists()  # it really was interrupted
    saved = torch.load(checkpoint, map_location="cpu", weights_only=True)
    assert saved["step"] % EVERY == 0 and 0 < saved["step"] < STEPS

    resumed = subprocess.run(cli("train", "--resume", "--out", str(run), "--no-progress", "--device", "cpu"),
                             env=ENV, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    full = subprocess.run(cli(*ARGS, "--out", str(ref)), env=ENV, capture_output=True, text=True, timeout=600)
    assert full.returncode == 0, full.stderr
    assert len(curve(ref)) == STEPS + 1
    assert curve(run) == curve(ref)  # every loss, learning rate and gradient norm, to the last digit (repr)
    # the final weights too
    a = torch.load(ref / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(run / "checkpoint.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def dying_notebook(path):
    return write_notebook(
        path, "mode = 'ok'",
        "import os, signal\n"
        "from markovlib.book.sweep import record_results\n"
        "if mode == 'kernel':\n"
        "    os._exit(3)  # the kernel process dies mid-run\n"
        "if mode == 'worker':\n"
        "    os.kill(os.getppid(), signal.SIGKILL)  # the dask worker process running this notebook dies\n"
        "    import time; time.sleep(60)\n"
        "record_results({'done': True})")


@pytest.mark.slow
def test_sweep_reports_dead_kernels_and_workers_and_finishes_the_others(tmp_path):
    nb = dying_notebook(tmp_path / "dying.ipynb")
    rows = run_sweep(nb, ["mode=ok,kernel,worker,ok"], tmp_path / "out", workers=2, timeout=120, verbose=False)
    status = {(i, r["mode"]): r["status"] for i, r in enumerate(rows)}
    assert status == {(0, "ok"): "ok", (1, "kernel"): "failed", (2, "worker"): "failed", (3, "ok"): "ok"}, rows
    assert rows[0]["done"] is True and rows[3]["done"] is True
    assert rows[1]["error"] and rows[2]["error"]
    with open(tmp_path / "out" / "results.csv") as fh:
        assert [r["status"] for r in csv.DictReader(fh)] == ["ok", "failed", "failed", "ok"]
