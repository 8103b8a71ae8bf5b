"""Parameter sweeps of a papermill notebook on dask.distributed, and the results convention of the book.

    python -m markovlib sweep book/chapter.ipynb --grid p=0.2,0.5 --grid seed=0,1,2 --out runs/sweep

runs the notebook once per point of the cartesian grid (papermill injects the point after the cell tagged
``parameters``), through :func:`markovlib.book.cluster.run_tasks`: on a ``LocalCluster`` of ``--workers``
single-threaded worker processes or on the dask scheduler at ``--scheduler tcp://host:port`` (the notebook and
``--out`` must then be on a file system the workers share). Grid values are parsed as int, then float, then
bool (true/false), else kept as str.

Results convention: a notebook reports its scalar results with :func:`record_results`, which writes a JSON
sidecar to the path in the environment variable ``MARKOVLIB_RESULTS`` (and does nothing when it is unset, so
the same notebook runs unchanged by hand, in papermill, under nbval or in the book build). The sweep sets the
variable for every run (in a first code cell it adds to the executed copy, tagged ``markovlib-sweep``), then
collects the sidecars into ``<out>/results.csv``: one row per grid point with its parameters, its results, a
``status`` (``ok`` / ``failed``) and the ``error`` message of a failed run. A failed run does not stop the
sweep; the exit code is 0 when every run succeeded and 1 otherwise. Executed notebooks are kept under
``<out>/notebooks/`` (a failed one shows the error where it happened).
"""
from __future__ import annotations

import csv
import itertools
import json
import math
import numbers
import os
import re
import sys
import time
from pathlib import Path

from ..numerics import checks
from .cluster import check_scheduler, run_tasks

RESULTS_ENV = "MARKOVLIB_RESULTS"
SWEEP_CELL_TAG = "markovlib-sweep"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ------------------------------------------------------------------------------------------------------------
# the notebook side
# ------------------------------------------------------------------------------------------------------------
def _scalar(key, value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0 and getattr(value, "size", 1) == 1:
        value = value.item()  # numpy / torch scalars
        if isinstance(value, bool):
            return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ValueError(f"results[{key!r}] must be a scalar (bool, int, float, str or None), got "
                     f"{type(value).__name__}")


def record_results(results: dict, path=None) -> dict:
    """Record a notebook's scalar results for a sweep: merge ``results`` into the JSON file at ``path``
    (default: the environment variable MARKOVLIB_RESULTS, set by the sweep for each run). Without a path this
    is a no-op. Values must be scalars (numpy / torch 0-d values are converted). Returns the dict recorded."""
    if not isinstance(results, dict):
        raise ValueError(f"results must be a dict of scalars, got {type(results).__name__}")
    clean = {}
    for key, value in results.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"results keys must be non-empty strings, got {key!r}")
        clean[key] = _scalar(key, value)
    path = path if path is not None else os.environ.get(RESULTS_ENV)
    if not path:
        return clean
    path = Path(path)
    merged = {}
    if path.is_file():
        try:
            merged = json.loads(path.read_text())
        except json.JSONDecodeError:
            merged = {}
    merged.update(clean)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(merged, indent=2, allow_nan=True) + "\n")
    os.replace(tmp, path)
    return clean


# ------------------------------------------------------------------------------------------------------------
# grid
# ------------------------------------------------------------------------------------------------------------
def parse_value(text: str):
    """'3' -> 3, '0.5' / '1e-3' -> float, 'true' / 'False' -> bool, anything else -> the string."""
    s = text.strip()
    try:
        return int(s)
    except ValueError:
        pass
    try:
        x = float(s)
        if math.isfinite(x) or s.lower() in ("inf", "-inf", "nan"):
            return x
    except ValueError:
        pass
    if s.lower() in ("true", "false"):
        return s.lower() == "true"
    return s


def parse_grid(specs) -> dict:
    """``["p=0.2,0.5", "seed=0,1"]`` -> ``{"p": [0.2, 0.5], "seed": [0, 1]}`` (insertion ordered)."""
    if isinstance(specs, str):
        specs = [specs]
    grid = {}
    for spec in specs or []:
        if not isinstance(spec, str) or "=" not in spec:
            raise ValueError(f"grid entries must look like NAME=V1,V2,..., got {spec!r}")
        name, _, values = spec.partition("=")
        name = name.strip()
        if not _NAME.match(name):
            raise ValueError(f"grid parameter name must be a Python identifier, got {name!r} in {spec!r}")
        if name in grid:
            raise ValueError(f"grid parameter {name!r} given twice")
        items = [v for v in values.split(",")]
        if not values.strip() or any(not v.strip() for v in items):
            raise ValueError(f"grid entry {spec!r} has an empty value")
        grid[name] = [parse_value(v) for v in items]
    return grid


def grid_points(grid: dict) -> list[dict]:
    """The cartesian product of the grid, last parameter fastest; [{}] for an empty grid."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def _run_name(index, params):
    parts = [f"{k}={v}" for k, v in params.items()]
    tail = re.sub(r"[^A-Za-z0-9_.=-]+", "_", "_".join(parts))[:80]
    return f"{index:04d}" + (f"_{tail}" if tail else "")


# ------------------------------------------------------------------------------------------------------------
# one run (executed on a dask worker)
# ------------------------------------------------------------------------------------------------------------
def run_notebook(notebook, params, output, results_path, *, timeout=1800, kernel_name="python3") -> dict:
    """Execute ``notebook`` with papermill and ``params``, the results sidecar at ``results_path``; never
    raises: returns {"status", "error", "results", "seconds", "output"}. ``timeout`` bounds every cell
    (papermill's execution_timeout)."""
    import nbformat
    import papermill as pm

    t0 = time.perf_counter()
    results_path = Path(results_path)
    if results_path.exists():
        results_path.unlink()
    status, error = "ok", ""
    try:
        nb = nbformat.read(str(notebook), as_version=4)
        cell = nbformat.v4.new_code_cell(
            f"import os\nos.environ[{RESULTS_ENV!r}] = {json.dumps(str(results_path))}",
            metadata={"tags": [SWEEP_CELL_TAG]})
        nb.cells.insert(0, cell)
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        pm.execute_notebook(nb, str(output), parameters=dict(params), kernel_name=kernel_name,
                            execution_timeout=timeout, progress_bar=False, log_output=False,
                            cwd=str(Path(notebook).resolve().parent))
    except Exception as exc:  # noqa: BLE001 -- every failure is reported, none stops the sweep
        status = "failed"
        ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
        error = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    results = {}
    if results_path.is_file():
        try:
            results = json.loads(results_path.read_text())
        except json.JSONDecodeError as exc:
            status, error = "failed", error or f"unreadable results sidecar: {exc}"
    return {"status": status, "error": error.strip(), "results": results,
            "seconds": time.perf_counter() - t0, "output": str(output)}


# ------------------------------------------------------------------------------------------------------------
# the sweep
# ------------------------------------------------------------------------------------------------------------
def run_notebook_task(notebook, params, output, results_path, timeout, kernel_name) -> dict:
    """:func:`run_notebook` with positional arguments (a dask task)."""
    return run_notebook(notebook, params, output, results_path, timeout=timeout, kernel_name=kernel_name)


def _validate(notebook, grid, workers, timeout, scheduler):
    """The sweep's arguments, checked before any work starts (ValueError naming the argument)."""
    path = Path(notebook).resolve()
    if not path.is_file() or path.suffix != ".ipynb":
        raise ValueError(f"notebook must be an existing .ipynb file, got {str(notebook)!r}")
    grid = parse_grid(grid) if not isinstance(grid, dict) else grid
    workers = checks.positive_int("workers", workers)
    timeout = checks.positive_int("timeout", timeout)
    check_scheduler(scheduler)
    return path, grid, workers, timeout


def check_sweep_args(args) -> None:
    """Validate the arguments of ``python -m markovlib sweep`` (raises ValueError; nothing is run)."""
    _validate(args.notebook, args.grid, args.workers, args.timeout, args.scheduler)


def run_sweep(notebook, grid, out, *, scheduler=None, workers=2, timeout=1800, kernel_name="python3",
              verbose=True) -> list[dict]:
    """Run ``notebook`` over the cartesian ``grid`` (a dict name -> values, or a list of "name=v1,v2"
    strings) on dask; write ``<out>/results.csv`` and return its rows (dicts). See the module docstring."""
    notebook, grid, workers, timeout = _validate(notebook, grid, workers, timeout, scheduler)
    out = Path(out).resolve()
    points = grid_points(grid)
    out.mkdir(parents=True, exist_ok=True)
    tasks = []
    for i, params in enumerate(points):
        name = _run_name(i, params)
        tasks.append((params, out / "notebooks" / f"{notebook.stem}-{name}.ipynb", out / "results" / f"{name}.json"))

    names = [_run_name(i, params) for i, (params, _, _) in enumerate(tasks)]
    index = {name: i for i, name in enumerate(names)}
    done = []

    def report(o):
        done.append(o)
        if verbose:
            status = o.value["status"] if o.status == "ok" else "failed"
            error = o.value["error"] if o.status == "ok" else o.error
            tag = "ok" if status == "ok" else f"FAILED ({error})"
            print(f"[{len(done)}/{len(tasks)}] {o.key}: {tag}", flush=True)

    # A worker process that dies (a kernel killing its parent, out of memory, os._exit) takes its task down: the
    # task is reported as failed (KilledWorker) instead of being retried on the next worker, where it would most
    # likely die again (allowed_failures=0); the other grid points carry on (the nanny restarts the worker).
    results = run_tasks(run_notebook_task, [(name, (str(notebook), params, str(nb_out), str(res), timeout,
                                                    kernel_name)) for name, (params, nb_out, res) in zip(names, tasks)],
                        scheduler=scheduler, workers=workers, allowed_failures=0, on_done=report, verbose=False,
                        prefix=f"markovlib-sweep-{out.name}")
    outcomes = []
    for o in results:
        if o.status == "ok":
            outcomes.append(o.value)
        else:  # a worker died: report, keep going
            outcomes.append({"status": "failed", "error": o.error, "results": {}, "seconds": float("nan"),
                             "output": str(tasks[index[o.key]][1])})

    rows = []
    for (params, _, _), outcome in zip(tasks, outcomes):
        row = dict(params)
        for key, value in outcome["results"].items():
            row[key if key not in params else f"result_{key}"] = value
        row.update(status=outcome["status"], error=outcome["error"], seconds=round(outcome["seconds"], 3),
                   notebook=outcome["output"])
        rows.append(row)
    columns = list(grid)
    for row in rows:
        columns += [k for k in row if k not in columns and k not in ("status", "error", "seconds", "notebook")]
    columns += ["status", "error", "seconds", "notebook"]
    with open(out / "results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def summarize(rows) -> str:
    failed = [r for r in rows if r["status"] != "ok"]
    lines = [f"{len(rows)} run(s): {len(rows) - len(failed)} ok, {len(failed)} failed"]
    for r in failed:
        lines.append(f"  FAILED {r['notebook']}: {r['error']}")
    return "\n".join(lines)


def sweep_from_args(args) -> int:
    """``python -m markovlib sweep``: run the sweep, print the summary, return the exit code (0 all ok, 1 not)."""
    rows = run_sweep(args.notebook, args.grid, args.out, scheduler=args.scheduler, workers=args.workers,
                     timeout=args.timeout)
    print(summarize(rows))
    print(f"results: {Path(args.out) / 'results.csv'}")
    sys.stdout.flush()
    return 0 if all(r["status"] == "ok" for r in rows) else 1
