"""What the stored paper-scale runs share (tools/run_fig4.py, tools/run_lowrank.py): one ``python -m markovlib
train`` command per run, a work folder where a finished run (its summary.json exists) is not run again, and a
manifest with the exact commands, the seeds and the versions."""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}  # one thread per run: runs go side by side


def train_command(options, out):
    return [sys.executable, "-m", "markovlib", "train", *options, "--device", "cpu", "--no-progress",
            "--out", str(out)]


def printable(cmd):
    """The command as the manifest records it (``python``, and OUT for the run's folder)."""
    return " ".join(["python"] + cmd[1:-2] + ["--out", "OUT"])


def run_one(cmd, out):
    """Run ``cmd`` unless ``out`` holds a finished run; return the rows of its metrics.csv."""
    out = Path(out)
    if not (out / "summary.json").is_file():
        subprocess.run(cmd, check=True, env=dict(os.environ, **ENV), capture_output=True, text=True)
    with open(out / "metrics.csv") as fh:
        return list(csv.DictReader(fh))


def run_all(jobs, workers, collect_only=False):
    """``jobs``: (key, cmd, out) triples. Returns (key, cmd, rows) for the finished ones, in the jobs' order."""
    if collect_only:
        return [(key, cmd, run_one(cmd, out)) for key, cmd, out in jobs if (Path(out) / "summary.json").is_file()]
    results = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_one, cmd, out) for _, cmd, out in jobs]
        for i, ((key, cmd, _), fut) in enumerate(zip(jobs, futures)):
            results.append((key, cmd, fut.result()))
            print(f"{i + 1}/{len(jobs)} done: {key}", flush=True)
    return results


def git_commit():
    """The commit the runs are collected at (recorded in every manifest)."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def versions():
    import numpy
    import torch

    import markovlib
    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__,
            "markovlib": markovlib.__version__, "git_commit": git_commit(), "machine": platform.machine(),
            "torch_threads": 1}


def parse_args(argv, description, work_name):
    """The command line both tools share: ``--workers``, ``--work`` (default /tmp/<work_name>), ``--collect``.
    Returns (args, the work folder, which it creates)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / work_name))
    ap.add_argument("--collect", action="store_true", help="only collect the finished runs")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    return args, work


def write_curves(path, key_names, columns, results, keep=None):
    """One CSV row per recorded step of every run: the run's key, the step, then ``columns`` of its metrics.csv
    (only the rows for which ``keep(row)`` is true, when given)."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*key_names, "step", *columns])
        for key, _, rows in results:
            for r in rows:
                if keep is None or keep(r):
                    w.writerow([*key, r["step"], *[r[c] for c in columns]])


def write_manifest(path, description, results, **settings):
    """The manifest: the tool's description, the versions, its settings, the runs' keys and exact commands."""
    manifest = {"description": description, "versions": versions(), **settings,
                "runs": [list(key) for key, _, _ in results],
                "commands": [printable(cmd) for _, cmd, _ in results], "environment": ENV}
    Path(path).write_text(json.dumps(manifest, indent=1) + "\n")
