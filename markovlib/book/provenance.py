"""The ``provenance`` block of every stored paper-scale set (``book/data/*/manifest*.json``, written by the tools
``tools/run_*.py``): what a stranger needs to trust the set and to make it again.

:class:`Provenance` is started when a tool starts (the git state and the clock) and gives the block when the tool's
files are written: the exact command, the seeds, the library versions, the git commit with a dirty flag, the CPU
model and instruction-set flags (and the BLAS build that ran), the niceness, the wall time, and a sha256 of every
data file (``tests/test_stored_data.py`` checks them; :func:`markovlib.book.stored.verify_checksums` in a chapter).

The repository root :data:`ROOT` is the folder above this package: the checkout the running markovlib comes from
(``pip install -r requirements.txt`` installs it editable, ``-e .``, so the package stays in its checkout). It is
taken from the package, not from the tool, because the code that makes a set is this package: the git state
recorded is the state of that code, and the sets go to its ``book/data``. A tool of another checkout that imports
this markovlib (a second worktree run without ``PYTHONPATH``) would record one checkout's commit for the other's code
and write into the other's ``book/data``; :func:`check_checkout` refuses that run (every :class:`Provenance` calls
it), and a markovlib installed outside a checkout (no ``pyproject.toml`` above the package) is refused too.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # markovlib/book/provenance.py -> the checkout (module docstring)
UNKNOWN = "not recorded when the set was made"  # what older manifests hold where a field was not recorded
ISA_PREFIXES = ("sse", "ssse", "avx", "fma", "f16c", "bmi", "popcnt", "lzcnt", "movbe", "amx", "vaes", "vpclmul",
                "gfni", "sha", "aes", "pclmul", "neon", "asimd", "sve", "fp", "adx", "abm")
NUMERIC_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NPY_DISABLE_CPU_FEATURES",
               "ATEN_CPU_CAPABILITY")  # the variables that select a numeric configuration


def check_checkout(script=None, root=None) -> Path:
    """Check that the tool ``script`` (default ``sys.argv[0]``) runs on the markovlib of its own checkout
    ``root`` (default :data:`ROOT`); return ``root``. RuntimeError when ``root`` is no checkout (no
    ``pyproject.toml``: markovlib installed elsewhere than editable) or when the script sits in the ``tools/``
    folder of another checkout (a folder that holds ``markovlib/`` too). Other scripts (pytest, ``python -c``) pass.
    """
    root = Path(ROOT if root is None else root).resolve()
    if not (root / "pyproject.toml").is_file():
        raise RuntimeError(f"markovlib is imported from {root.parent}, not from a checkout: run the tools from the "
                           "repository root after `pip install -r requirements.txt` (which installs it editable)")
    script = Path(sys.argv[0] if script is None else script).resolve()
    other = script.parents[1] if len(script.parents) > 1 else None
    if script.parent.name == "tools" and other != root and (other / "markovlib").is_dir():
        raise RuntimeError(f"{script} belongs to the checkout {other} but imports markovlib from {root}: run it "
                           f"with PYTHONPATH={other} (or `pip install -e {other}`), so that the code, the recorded "
                           "git state and the output folder are those of one checkout")
    return root


def git_commit(root=None) -> str:
    """The commit the runs are collected at (recorded in every manifest); ``root`` defaults to :data:`ROOT`."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT if root is None else root, capture_output=True,
                          text=True).stdout.strip()


def git_state(ignore=(), root=None) -> dict:
    """{"commit", "dirty", "changes"} of the checkout ``root`` (default :data:`ROOT`): uncommitted changes to tracked
    files and untracked files (``git status --porcelain`` lines, the first 50), except under the folders ``ignore``
    (the set being written)."""
    root = Path(ROOT if root is None else root).resolve()
    lines = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True,
                           text=True).stdout.splitlines()
    skip = [str(Path(p).resolve().relative_to(root)) + "/" for p in ignore if Path(p).resolve().is_relative_to(root)]
    changes = [ln for ln in lines if not any(ln[3:].startswith(s) for s in skip)]
    return {"commit": git_commit(root), "dirty": bool(changes), "changes": changes[:50]}


def versions() -> dict:
    """The versions of python, numpy, markovlib and of the libraries the runs may use that are installed."""
    from importlib.metadata import PackageNotFoundError, version

    import numpy

    import markovlib

    out = {"python": platform.python_version(), "numpy": numpy.__version__, "markovlib": markovlib.__version__}
    for name in ("scipy", "torch", "dask", "distributed", "papermill", "scikit-learn", "threadpoolctl"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:  # not installed
            pass
    return out


def cpu() -> dict:
    """The CPU model, its instruction-set flags (/proc/cpuinfo, filtered to ISA extensions), numpy's view of the
    CPU features, the variables that select a numeric configuration (:data:`NUMERIC_ENV`) and the BLAS libraries
    loaded (threadpoolctl: OpenBLAS's kernel architecture decides rounding)."""
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

        numpy.ones(2) @ numpy.ones(2)  # loads the BLAS, so that threadpoolctl sees it
        info["blas"] = [{k: d.get(k) for k in ("internal_api", "version", "architecture", "threading_layer")}
                        for d in threadpool_info()]
    except ImportError:
        pass
    return info


def sha256(path) -> str:
    """The sha256 of the file ``path``, in hex (read in chunks of 1 MiB)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checksums(folder, names) -> dict:
    """{name: {"sha256", "bytes"}} of the data files ``names`` in ``folder``."""
    return {n: {"sha256": sha256(Path(folder) / n), "bytes": (Path(folder) / n).stat().st_size} for n in names}


def command_line(argv=None, root=None) -> str:
    """The exact command that runs this tool, from the repository root ``root`` (default :data:`ROOT`):
    ``python tools/<tool>.py ...`` from ``argv`` (default ``sys.argv``)."""
    argv = sys.argv if argv is None else argv
    root = Path(ROOT if root is None else root).resolve()
    script = Path(argv[0]).resolve()
    script = script.relative_to(root) if script.is_relative_to(root) else script
    return shlex.join(["python", str(script), *argv[1:]])


class Provenance:
    """Started when the tool starts (the checkout checked, the git state and the clock), finished when its files
    are written (:meth:`block`). ``out``: the output folder (its changes do not make the checkout dirty); ``argv``:
    the tool's command line (default ``sys.argv``)."""

    def __init__(self, out, argv=None):
        self.root = check_checkout()
        self.out = Path(out)
        self.t0 = time.perf_counter()
        self.started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.command = command_line(argv, self.root)
        self.git = git_state(ignore=[self.out], root=self.root)

    def block(self, seeds, files, **extra) -> dict:
        """The manifest's ``provenance`` block for the data files ``files`` (names in the output folder); ``extra``
        keys (e.g. ``complete``) go before ``files``."""
        return {"command": self.command, "niceness": os.nice(0) if hasattr(os, "nice") else None,
                "seeds": seeds, "versions": versions(), "git": self.git, "cpu": cpu(),
                "started": self.started, "wall_seconds": round(time.perf_counter() - self.t0, 1),
                **extra, "files": checksums(self.out, files)}
