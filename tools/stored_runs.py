"""What the stored paper-scale runs share (every tools/run_*.py): grids on dask.distributed, and manifests a stranger
can trust.

- Grids run through :func:`markovlib.book.cluster.run_tasks` (the engine of ``python -m markovlib sweep``): a
  LocalCluster of ``--workers`` single-threaded worker processes by default, or the scheduler at ``--scheduler
  tcp://host:port``. A worker that dies mid-task is replaced and its task retried (``--allowed-failures``); what
  still fails is reported, recorded in the manifest, and the tool exits with status 1: no run is silently missing.
- Tools of the Part I runs (run_fig4, run_lowrank) run one ``python -m markovlib train`` command per run, in a work
  folder where a finished run (its summary.json exists) is not run again, so an interrupted grid resumes.
- :func:`provenance` is the manifest's ``provenance`` block, the same for every stored set: the exact command, the
  seeds, the library versions, the git commit with a dirty flag, the CPU model and instruction-set flags (and the
  BLAS build that ran), the wall time, and a sha256 of every data file (tests/test_stored_data.py checks them).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}  # one thread per run: runs go side by side
UNKNOWN = "not recorded when the set was made"
ISA_PREFIXES = ("sse", "ssse", "avx", "fma", "f16c", "bmi", "popcnt", "lzcnt", "movbe", "amx", "vaes", "vpclmul",
                "gfni", "sha", "aes", "pclmul", "neon", "asimd", "sve", "fp", "adx", "abm")
NUMERIC_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NPY_DISABLE_CPU_FEATURES",
               "ATEN_CPU_CAPABILITY")  # the variables that select a numeric configuration


# ------------------------------------------------------------------------------------------------------------
# the command line every tool shares
# ------------------------------------------------------------------------------------------------------------
def add_cluster_arguments(ap: argparse.ArgumentParser, workers=2):
    """``--workers``, ``--scheduler``, ``--allowed-failures`` (markovlib.book.cluster.run_tasks)."""
    ap.add_argument("--workers", type=int, default=workers, help="LocalCluster worker processes (one thread each)")
    ap.add_argument("--scheduler", default=None, help="address of an existing dask scheduler, tcp://host:port")
    ap.add_argument("--allowed-failures", type=int, default=2,
                    help="times a task may lose its worker and be retried (LocalCluster only)")
    return ap


def seed_list(text):
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
    """The command line of run_fig4 and run_lowrank: the cluster options, ``--out`` (default ``out``), ``--work``
    (default /tmp/<work_name>), ``--collect``; with ``seeds`` (the default list) also ``--seeds`` and ``--tag`` (a
    set made in parts: the files of a part are named ``<name>_<tag>``; ``args.suffix`` is ``_<tag>`` or empty); and
    what ``extra(parser)`` adds. Returns (args, the work folder, which it creates)."""
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
    """:func:`markovlib.book.cluster.run_tasks` with the tool's cluster options."""
    from markovlib.book.cluster import run_tasks

    return run_tasks(fn, tasks, scheduler=args.scheduler, workers=args.workers,
                     allowed_failures=args.allowed_failures, on_done=on_done, prefix=Path(sys.argv[0]).stem or "tool")


# ------------------------------------------------------------------------------------------------------------
# Part I runs: one `python -m markovlib train` command each
# ------------------------------------------------------------------------------------------------------------
def train_command(options, out):
    return [sys.executable, "-m", "markovlib", "train", *options, "--device", "cpu", "--no-progress",
            "--out", str(out)]


def printable(cmd):
    """The command as the manifest records it (``python``, and OUT for the run's folder)."""
    return " ".join(["python"] + cmd[1:-2] + ["--out", "OUT"])


def _die_with_parent():  # pragma: no cover (runs in the child between fork and exec)
    """Linux: the run is killed with the worker that started it (a retried run never meets a stale one)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run_one(cmd, out):
    """Run ``cmd`` unless ``out`` holds a finished run; return the rows of its metrics.csv (a dask task)."""
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


# ------------------------------------------------------------------------------------------------------------
# provenance
# ------------------------------------------------------------------------------------------------------------
def git_commit():
    """The commit the runs are collected at (recorded in every manifest)."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def git_state(ignore=()):
    """{"commit", "dirty", "changes"}: uncommitted changes to tracked files and untracked files, except under the
    folders ``ignore`` (the set being written)."""
    lines = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                           text=True).stdout.splitlines()
    skip = [str(Path(p).resolve().relative_to(ROOT)) + "/" for p in ignore if Path(p).resolve().is_relative_to(ROOT)]
    changes = [ln for ln in lines if not any(ln[3:].startswith(s) for s in skip)]
    return {"commit": git_commit(), "dirty": bool(changes), "changes": changes[:50]}


def versions():
    import numpy

    import markovlib
    out = {"python": platform.python_version(), "numpy": numpy.__version__, "markovlib": markovlib.__version__}
    for name in ("scipy", "torch", "dask", "distributed", "papermill", "scikit-learn", "threadpoolctl"):
        try:
            from importlib.metadata import version

            out[name] = version(name)
        except Exception:  # noqa: BLE001 -- not installed
            pass
    return out


def cpu():
    """The CPU model, its instruction-set flags (/proc/cpuinfo, filtered to ISA extensions), numpy's view of the
    CPU features and the BLAS libraries loaded (threadpoolctl: OpenBLAS's kernel architecture decides rounding)."""
    import numpy

    info = {"model": platform.processor() or "unknown", "machine": platform.machine(), "logical_cores": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text()
        fields = dict(ln.split(":", 1) for ln in text.splitlines() if ":" in ln)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        info["model"] = fields.get("model name", fields.get("Model", info["model"]))
        flags = (fields.get("flags") or fields.get("Features") or "").split()
        info["isa_flags"] = sorted(f for f in flags if f.startswith(ISA_PREFIXES))
    except OSError:
        info["isa_flags"] = "unknown (no /proc/cpuinfo)"
    try:
        from numpy._core._multiarray_umath import __cpu_features__

        info["numpy_cpu_features"] = sorted(k for k, v in __cpu_features__.items() if v)
    except ImportError:
        pass
    info["numpy_disable_cpu_features"] = os.environ.get("NPY_DISABLE_CPU_FEATURES", "")
    info["numeric_environment"] = {k: os.environ[k] for k in NUMERIC_ENV if k in os.environ}
    try:
        from threadpoolctl import threadpool_info

        numpy.ones(2) @ numpy.ones(2)
        info["blas"] = [{k: d.get(k) for k in ("internal_api", "version", "architecture", "threading_layer")}
                        for d in threadpool_info()]
    except ImportError:
        pass
    return info


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checksums(folder, names):
    """{name: {"sha256", "bytes"}} of the data files ``names`` in ``folder``."""
    return {n: {"sha256": sha256(Path(folder) / n), "bytes": (Path(folder) / n).stat().st_size} for n in names}


def command_line(argv=None):
    """The exact command that runs this tool, from the repository root (``python tools/<tool>.py ...``)."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    script = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return shlex.join(["python", str(script), *argv[1:]])


class Provenance:
    """Started when the tool starts (the git state and the clock), finished when its files are written."""

    def __init__(self, out, argv=None):
        self.out = Path(out)
        self.t0 = time.perf_counter()
        self.started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.command = command_line(argv)
        self.git = git_state(ignore=[self.out])

    def block(self, seeds, files, **extra):
        """The manifest's ``provenance`` block for the data files ``files`` (names in the output folder)."""
        return {"command": self.command, "niceness": os.nice(0) if hasattr(os, "nice") else None,
                "seeds": seeds, "versions": versions(), "git": self.git, "cpu": cpu(),
                "started": self.started, "wall_seconds": round(time.perf_counter() - self.t0, 1),
                **extra, "files": checksums(self.out, files)}


def write_manifest(path, description, results, prov: Provenance, files, failed=(), **settings):
    """The manifest of a Part I grid: the tool's description, its settings, the runs' keys and exact commands, the
    runs that failed (with their errors), and the provenance block."""
    manifest = {"description": description, "versions": versions(), **settings,
                "runs": [list(key) for key, _, _ in results],
                "commands": [printable(cmd) for _, cmd, _ in results], "environment": ENV,
                "failed_runs": [[list(key), err] for key, err in failed],
                "provenance": prov.block(settings.get("seeds"), files)}
    Path(path).write_text(json.dumps(manifest, indent=1) + "\n")
