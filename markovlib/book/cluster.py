"""Grids of independent tasks on dask.distributed: the one engine behind ``python -m markovlib sweep`` and every
paper-scale tool (``tools/run_*.py``).

:func:`run_tasks` runs ``fn(*args)`` for every task on a ``LocalCluster`` of ``workers`` single-threaded worker
processes (dask's nanny starts them with one BLAS/OpenMP thread each), or on the scheduler at ``scheduler``
(``tcp://host:port``; its workers must import markovlib and share the file system the tasks write to). Functions
of a module outside markovlib (a tool script) travel by value, so the workers need not import the tool.

A worker that dies while it runs a task (killed, out of memory) takes the task down; the scheduler gives the task to
another worker, until it has been on ``allowed_failures + 1`` dying workers, then the task fails with
``KilledWorker``. A task that raises is not retried (it would raise again). Each worker holds only the task it
runs, so a dying worker takes no queued task with it. With a LocalCluster ``allowed_failures`` is set here; an
existing scheduler keeps its own setting (``distributed.scheduler.allowed-failures``, 3 by default). Every task
ends as an :class:`Outcome`, ``ok`` with its value or ``failed`` with the error: none is dropped, and ``on_done``
sees each as it arrives (a tool stores it at once, so an interrupted grid resumes).
"""
from __future__ import annotations

import dataclasses
import sys
import time

from ..numerics import checks


@dataclasses.dataclass
class Outcome:
    """How one task ended: ``status`` "ok" (``value`` is its return value) or "failed" (``error`` says why)."""
    key: str
    status: str
    value: object = None
    error: str = ""
    seconds: float = float("nan")


def check_scheduler(scheduler):
    """None (start a LocalCluster) or an address like tcp://host:8786; ValueError otherwise."""
    if scheduler is not None and not (isinstance(scheduler, str) and "://" in scheduler):
        raise ValueError(f"scheduler must be an address like tcp://host:8786, got {scheduler!r}")
    return scheduler


def _timed(fn, *args):
    t0 = time.perf_counter()
    return fn(*args), time.perf_counter() - t0


def _by_value(fn):
    """Send functions of modules outside markovlib by value (a tool imported by path is not on the workers)."""
    module = getattr(fn, "__module__", None) or ""
    if module.split(".")[0] not in ("markovlib", "__main__") and module in sys.modules:
        import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[module])


def run_tasks(fn, tasks, *, scheduler=None, workers=2, allowed_failures=2, on_done=None, verbose=True,
              prefix="markovlib") -> list[Outcome]:
    """Run ``fn(*args)`` for every ``(key, args)`` of ``tasks`` on dask (module docstring); return the outcomes in
    the tasks' order. ``on_done(outcome)`` is called in this process as each task ends; with ``verbose`` a line
    ``[done/total] key: ok`` (or ``FAILED (error)``) is printed."""
    check_scheduler(scheduler)
    workers = checks.positive_int("workers", workers)
    allowed_failures = checks.nonnegative_int("allowed_failures", allowed_failures)
    tasks = [(str(key), tuple(args)) for key, args in tasks]
    if len({k for k, _ in tasks}) != len(tasks):
        raise ValueError("tasks must have distinct keys")
    if not tasks:
        return []
    import dask
    from dask.distributed import Client, LocalCluster, as_completed

    _by_value(fn)
    # worker-saturation 1.0: a worker holds only the task it runs (no queued extras), so a worker that dies takes
    # down that task alone and the tasks queued behind it go to the survivors untouched.
    config = dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures,
                              "distributed.scheduler.worker-saturation": 1.0})
    cluster = None
    outcomes: dict[str, Outcome] = {}
    try:
        if scheduler is None:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        else:
            client = Client(scheduler)
        try:
            stamp = time.time_ns()
            futures = {client.submit(_timed, fn, *args, pure=False, key=f"{prefix}-{i}-{stamp}"): key
                       for i, (key, args) in enumerate(tasks)}
            for done, fut in enumerate(as_completed(list(futures)), 1):
                key = futures[fut]
                try:
                    value, seconds = fut.result()
                    outcome = Outcome(key, "ok", value, "", seconds)
                except Exception as exc:  # noqa: BLE001 -- a failed task (or a worker that died) is reported
                    outcome = Outcome(key, "failed", None, " ".join(f"{type(exc).__name__}: {exc}".split()))
                outcomes[key] = outcome
                if on_done is not None:
                    on_done(outcome)
                if verbose:
                    tag = "ok" if outcome.status == "ok" else f"FAILED ({outcome.error})"
                    print(f"[{done}/{len(tasks)}] {key}: {tag}", flush=True)
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
        config.__exit__(None, None, None)
    return [outcomes[key] for key, _ in tasks]


def summary(outcomes) -> str:
    """'N task(s): k ok, m failed' and one line per failed task."""
    failed = [o for o in outcomes if o.status != "ok"]
    lines = [f"{len(outcomes)} task(s): {len(outcomes) - len(failed)} ok, {len(failed)} failed"]
    lines += [f"  FAILED {o.key}: {o.error}" for o in failed]
    return "\n".join(lines)
