"""What the paper-scale tools (``tools/run_*.py``) share besides the provenance block
(:mod:`markovlib.book.provenance`): the command line, grids on dask.distributed, and the files of a stored set.

- Grids run through :func:`markovlib.book.cluster.run_tasks` (the engine of ``python -m markovlib sweep``):
  :func:`run_grid` gives it the tool's options of :func:`add_cluster_arguments`: a LocalCluster of ``--workers``
  single-threaded worker processes by default, or the scheduler at ``--scheduler tcp://host:port``. A worker that
  dies mid-task is replaced and its task retried (``--allowed-failures``); what still fails is reported, recorded in
  the manifest, and the tool exits with status 1: no run is silently missing.
- Tools of the Part I runs (run_fig4, run_lowrank) run one ``python -m markovlib train`` command per run
  (:func:`train_command`, :func:`run_all`), in a work folder where a finished run (its summary.json exists) is not
  run again, so an interrupted grid resumes; :func:`parse_args` is their command line, :func:`write_curves` and
  :func:`write_manifest` their files.
- :func:`write_gz`: a gzipped CSV whose bytes (and so its sha256 in the manifest) depend on its rows only.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from .cluster import run_tasks
from .provenance import Provenance, versions

ENV = {"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}  # one thread per run: runs go side by side


# ------------------------------------------------------------------------------------------------------------
# the command line every tool shares
# ------------------------------------------------------------------------------------------------------------
def add_cluster_arguments(ap: argparse.ArgumentParser, workers=2) -> argparse.ArgumentParser:
    """Add ``--workers`` (default ``workers``), ``--scheduler``, ``--allowed-failures`` (the options of
    :func:`markovlib.book.cluster.run_tasks`) to the parser ``ap``; return it."""
    ap.add_argument("--workers", type=int, default=workers, help="LocalCluster worker processes (one thread each)")
    ap.add_argument("--scheduler", default=None, help="address of an existing dask scheduler, tcp://host:port")
    ap.add_argument("--allowed-failures", type=int, default=2,
                    help="times a task may lose its worker and be retried (LocalCluster only)")
    return ap


def seed_list(text) -> list[int]:
    """``a-b`` (inclusive) or ``a,b,c`` -> a list of distinct seeds >= 0 (argparse type of ``--seeds``)."""
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-"))
            seeds = list(range(lo, hi + 1))
        else:
            seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be a-b or a,b,c; got {text!r}") from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"seeds must be distinct integers >= 0; got {text!r}")
    return seeds


def parse_args(argv, description, work_name, out, seeds=None, extra=None):
    """The command line of run_fig4, run_lowrank, run_guideline and run_escape: the cluster options, ``--out``
    (default ``out``), ``--work`` (default /tmp/<work_name>), ``--collect``; with ``seeds`` (the default list) also
    ``--seeds`` and ``--tag`` (a set made in parts: the files of a part are named ``<name>_<tag>``; ``args.suffix``
    is ``_<tag>`` or empty); and what ``extra(parser)`` adds. Returns (args, the work folder, which it creates)."""
    ap = add_cluster_arguments(argparse.ArgumentParser(description=description))
    ap.add_argument("--out", default=str(out), help="output folder of the stored set")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / work_name))
    ap.add_argument("--collect", action="store_true", help="only collect the finished runs")
    if seeds is not None:
        ap.add_argument("--seeds", type=seed_list, default=list(seeds),
                        help=f"seeds, a-b or a,b,c (default {','.join(map(str, seeds))})")
        ap.add_argument("--tag", default="", help="a part of the set: files <name>_TAG.csv, manifest_TAG.json")
    if extra is not None:
        extra(ap)
    args = ap.parse_args(argv)
    if seeds is not None:
        if args.tag and not args.tag.replace("_", "").isalnum():
            ap.error(f"--tag must be letters, digits and underscores, got {args.tag!r}")
        args.suffix = f"_{args.tag}" if args.tag else ""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    return args, work


def run_grid(fn, tasks, args, on_done=None):
    """:func:`markovlib.book.cluster.run_tasks` of ``fn`` over ``tasks`` with the tool's cluster options ``args``
    (:func:`add_cluster_arguments`); the dask keys start with the tool's name. Returns the outcomes."""
    return run_tasks(fn, tasks, scheduler=args.scheduler, workers=args.workers,
                     allowed_failures=args.allowed_failures, on_done=on_done, prefix=Path(sys.argv[0]).stem or "tool")


# ------------------------------------------------------------------------------------------------------------
# Part I runs: one `python -m markovlib train` command each
# ------------------------------------------------------------------------------------------------------------
def train_command(options, out) -> list[str]:
    """The ``python -m markovlib train`` command (on the CPU, no progress bar) with ``options``, into ``out``."""
    return [sys.executable, "-m", "markovlib", "train", *options, "--device", "cpu", "--no-progress",
            "--out", str(out)]


def printable(cmd) -> str:
    """The command as the manifest records it (``python``, and OUT for the run's folder)."""
    return " ".join(["python"] + cmd[1:-2] + ["--out", "OUT"])


def _die_with_parent():  # pragma: no cover (runs in the child between fork and exec)
    """Linux: the run is killed with the worker that started it (a retried run never meets a stale one)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run_one(cmd, out) -> list[dict]:
    """Run ``cmd`` (with :data:`ENV`) unless ``out`` holds a finished run; return the rows of its metrics.csv (a
    dask task). RuntimeError with the end of its stderr when the command fails."""
    out = Path(out)
    if not (out / "summary.json").is_file():
        pre = _die_with_parent if sys.platform.startswith("linux") else None
        done = subprocess.run(cmd, env=dict(os.environ, **ENV), capture_output=True, text=True, preexec_fn=pre)
        if done.returncode:
            raise RuntimeError(f"exit status {done.returncode}: {done.stderr.strip()[-500:]}")
    with open(out / "metrics.csv") as fh:
        return list(csv.DictReader(fh))


def run_all(jobs, args):
    """``jobs``: (key, cmd, out) triples. Runs them on dask (or, with ``args.collect``, only reads the finished
    ones). Returns (results, failed): (key, cmd, rows) for the finished runs in the jobs' order, and (key, error)
    for the others."""
    if args.collect:
        results = [(key, cmd, run_one(cmd, out)) for key, cmd, out in jobs if (Path(out) / "summary.json").is_file()]
        done = {key for key, _, _ in results}
        return results, [(key, "not finished") for key, _, _ in jobs if key not in done]
    outcomes = run_grid(run_one, [("_".join(map(str, key)), (cmd, str(out))) for key, cmd, out in jobs], args)
    results = [(key, cmd, o.value) for (key, cmd, _), o in zip(jobs, outcomes) if o.status == "ok"]
    failed = [(key, o.error) for (key, _, _), o in zip(jobs, outcomes) if o.status != "ok"]
    return results, failed


# ------------------------------------------------------------------------------------------------------------
# the files of a stored set
# ------------------------------------------------------------------------------------------------------------
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


def write_gz(path, header, rows):
    """A gzipped CSV that is the same bytes for the same rows (no time stamp, no file name in the header), so its
    sha256 in a manifest is reproducible (run_guideline, run_escape)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    with open(path, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode())


def write_manifest(path, description, results, prov: Provenance, files, failed=(), **settings):
    """The manifest of a Part I grid: the tool's description, its settings, the runs' keys and exact commands, the
    runs that failed (with their errors), and the provenance block (the seeds from ``settings["seeds"]``)."""
    manifest = {"description": description, "versions": versions(), **settings,
                "runs": [list(key) for key, _, _ in results],
                "commands": [printable(cmd) for _, cmd, _ in results], "environment": ENV,
                "failed_runs": [[list(key), err] for key, err in failed],
                "provenance": prov.block(settings.get("seeds"), files)}
    Path(path).write_text(json.dumps(manifest, indent=1) + "\n")
