"""Part II at the paper's scale: Fig. 1(b) and Fig. 5(b) of "Get rich quick" on the paper's 17 x 17 grid with 16
seeds, and the size study of the end ranking; the results are committed as data.

    nice -n 10 python tools/run_relu_grid.py grid     # -> book/data/relu_grid/{grid.npz, manifest.json}
    nice -n 10 python tools/run_relu_grid.py sizes    # -> book/data/relu_sizes/{sizes.npz, manifest.json}
    python tools/run_relu_grid.py pilot               # throughput, and the horizon that fits --budget-minutes
    ... --scheduler tcp://host:8786                   # on an existing dask cluster (default: a LocalCluster)

grid: the authors' settings (markovlib.richlazy.relu_grid.PAPER: d = 100, n = 1000, h = 50, 3 teacher units,
10,000 test points, tau = logspace(-1, 0.3, 17), delta = linspace(-1, 1, 17), seeds 100 to 115, lr = 5e-3 / tau^2)
for --steps GD steps (the paper: 10^5; the default STEPS = 3000 is the longest horizon that fit 90 minutes on two
cores in the pilot: 0.63 CPU ms per network-step and 27 CPU ms per network and checkpoint, 84 minutes), recorded
at the checkpoints 0, 10, 20, 50, 100, ... and the horizon: train and test loss,
kernel distance to the initial NTK, Hamming distance of the activation patterns, parameter distance. One dask
task per seed trains its whole grid as one computation (markovlib.richlazy.relu_batch.train_networks).

sizes: the end-ranking question (upstream delta = +1 against balanced delta = 0, and downstream -1, at the smallest
tau = 0.1, final test loss) against the problem's size: (d, n) in SIZES with h = 50, 3 teacher units, 10,000 test
points, seeds 100 to 119, --steps (default SIZE_STEPS, the paper's 10^5) with the same kind of checkpoints (and the
grid's horizon, so that the two sets can be compared at it).

Every task's result is kept in --work (default /tmp/markovlib_relu_grid) as it arrives, so an interrupted run
resumes where it stopped (tasks with other settings are run again). A task that fails (after --allowed-failures
retries when its worker dies) leaves NaN in the arrays, its seeds flagged in ``complete``, and is listed in the
manifest's ``failed_tasks``; the tool then exits with status 1.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from markovlib.book.provenance import ROOT, Provenance
from markovlib.book.runner import add_cluster_arguments, run_grid
from markovlib.richlazy.relu_batch import METRICS  # noqa: E402
from markovlib.richlazy.relu_grid import PAPER, schedule, settings_check, train_grid  # noqa: E402

STEPS = 3000          # the grid's horizon: the pilot's longest within 90 minutes on two cores (the paper: 10^5)
SIZE_STEPS = 100_000  # the size study's horizon (the paper's)
SIZES = [(10, 100), (16, 150), (40, 400), (100, 1000)]   # (d, n): the chapter's, its reader set, between, the paper's
SIZE_SEEDS = list(range(100, 120))
SIZE_TAUS = [0.1]
SIZE_DELTAS = [-1.0, 0.0, 1.0]
OUT = {"grid": ROOT / "book" / "data" / "relu_grid", "sizes": ROOT / "book" / "data" / "relu_sizes"}


def seed_list(text):
    """'100-115' or '100,101,105' -> a list of seeds."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    if not out or min(out) < 0 or len(set(out)) != len(out):
        raise ValueError(f"seeds must be distinct integers >= 0, like 100-115 or 1,2,5; got {text!r}")
    return out


def plan(args):
    """[(key, settings, seeds)] for the mode, and the checkpoints."""
    if args.mode == "sizes":
        steps = args.steps or SIZE_STEPS
        cps = sorted(set(schedule(steps)) | ({STEPS} if STEPS < steps else set()))
        seeds = args.seeds or SIZE_SEEDS
        tasks = []
        for d, n in args.sizes or SIZES:
            s = settings_check(dict(PAPER, d=d, n=n, n_test=args.n_test or PAPER["n_test"], taus=SIZE_TAUS,
                                    deltas=SIZE_DELTAS, dtype=args.dtype))
            # seeds per task: about 300 CPU seconds each (a network-step costs about 15 us + 10 ns d n here)
            per = max(1, min(len(seeds), int(300 / (len(SIZE_DELTAS) * steps * (15e-6 + 1e-8 * d * n)))))
            tasks += [(f"d{d}_n{n}_seeds{chunk[0]}-{chunk[-1]}", s, chunk)
                      for chunk in (seeds[i:i + per] for i in range(0, len(seeds), per))]
        return tasks, cps
    steps = args.steps or STEPS
    s = settings_check(dict(PAPER, d=args.d or PAPER["d"], n=args.n or PAPER["n"],
                            n_test=args.n_test or PAPER["n_test"],
                            taus=np.logspace(-1, 0.3, args.n_tau).tolist() if args.n_tau else PAPER["taus"],
                            deltas=np.linspace(-1, 1, args.n_delta).tolist() if args.n_delta else PAPER["deltas"],
                            dtype=args.dtype))
    return [(f"seed{seed}", s, [seed]) for seed in (args.seeds or PAPER["seeds"])], schedule(steps)


def fingerprint(settings, seeds, cps):
    text = json.dumps({k: v for k, v in settings.items() if k not in ("seeds", "steps")}, sort_keys=True)
    return hashlib.sha256(f"{text}|{seeds}|{cps}".encode()).hexdigest()[:16]


def assemble(mode, tasks, cps, results):
    """One npz's arrays from the tasks' results (NaN where a task is missing)."""
    T = len(cps)
    if mode == "grid":
        s0 = tasks[0][1]
        seeds = [sd for _, _, ss in tasks for sd in ss]
        shape = (T, len(seeds), len(s0["taus"]), len(s0["deltas"]))
        arrays = {m: np.full(shape, np.nan) for m in METRICS}
        finite, complete = np.zeros(shape[1:], dtype=bool), np.zeros(len(seeds), dtype=bool)
        for i, (key, _, _) in enumerate(tasks):
            if key in results:
                for m in METRICS:
                    arrays[m][:, i] = results[key][m][:, 0]
                finite[i], complete[i] = results[key]["finite"][0], True
        return dict(arrays, finite=finite, complete=complete, seeds=np.array(seeds), steps=np.array(cps),
                    taus=np.array(s0["taus"]), deltas=np.array(s0["deltas"]))
    sizes = sorted({(s["d"], s["n"]) for _, s, _ in tasks}, key=lambda dn: dn[0] * dn[1])
    seeds = sorted({sd for _, _, ss in tasks for sd in ss})
    shape = (len(sizes), T, len(seeds), len(SIZE_DELTAS))
    arrays = {m: np.full(shape, np.nan) for m in METRICS}
    finite, complete = np.zeros((len(sizes), len(seeds), len(SIZE_DELTAS)), bool), np.zeros((len(sizes), len(seeds)),
                                                                                            bool)
    for key, s, ss in tasks:
        if key not in results:
            continue
        k, idx = sizes.index((s["d"], s["n"])), [seeds.index(sd) for sd in ss]
        for m in METRICS:
            arrays[m][k][:, idx] = results[key][m][:, :, 0]
        finite[k][idx], complete[k][idx] = results[key]["finite"][:, 0], True
    return dict(arrays, finite=finite, complete=complete, sizes=np.array(sizes), seeds=np.array(seeds),
                steps=np.array(cps), tau=np.array(SIZE_TAUS[0]), deltas=np.array(SIZE_DELTAS))


def pilot(args):
    """CPU seconds per network-step (paper size, one seed's grid) and per checkpoint; the horizon that fits."""
    from threadpoolctl import threadpool_limits

    from markovlib.richlazy.relu_batch import train_networks
    from markovlib.richlazy.relu_grid import problems

    s = settings_check(PAPER)
    steps = args.steps or 20
    with threadpool_limits(limits=1):
        p = problems(s, [PAPER["seeds"][0]])
        G = p["a0"][0, ..., 0].size
        t0 = time.process_time()
        train_networks(p["X"], p["y"], p["a0"], p["W0"], p["lr"][None], [steps], kernel=False)
        t_step = (time.process_time() - t0) / (G * steps)
        t0 = time.process_time()
        train_networks(p["X"], p["y"], p["a0"], p["W0"], p["lr"][None], [0, 1], X_test=p["X_test"],
                       y_test=p["y_test"])
        t_cp = (time.process_time() - t0 - G * t_step) / (2 * G)
    nets = G * len(PAPER["seeds"])
    budget = args.budget_minutes * 60 * args.cores
    best = None
    for H in [500, 1000, 2000, 3000, 5000, 10_000, 20_000, 50_000, 100_000]:
        cost = nets * (H * t_step + (len(schedule(H)) + 1) * t_cp)
        print(f"horizon {H:>7} steps: {cost / args.cores / 60:7.1f} minutes on {args.cores} cores "
              f"({len(schedule(H))} checkpoints)")
        if cost <= budget:
            best = H
    print(f"pilot: {t_step * 1e3:.3f} CPU ms per network-step, {t_cp * 1e3:.1f} CPU ms per network-checkpoint "
          f"(test loss on {s['n_test']} points, kernel distance on {s['n']}); {nets} networks; the longest horizon "
          f"within {args.budget_minutes} minutes on {args.cores} cores: {best} steps (the paper: 100000)")
    return 0


def main(argv=None) -> int:
    ap = add_cluster_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("mode", choices=["grid", "sizes", "pilot"])
    ap.add_argument("--steps", type=int, default=None, help=f"GD steps (grid: {STEPS}, sizes: {SIZE_STEPS})")
    ap.add_argument("--seeds", type=seed_list, default=None, help="seeds, like 100-115 (default: the mode's)")
    ap.add_argument("--d", type=int, default=None, help="grid: input dimension (default 100)")
    ap.add_argument("--n", type=int, default=None, help="grid: training points (default 1000)")
    ap.add_argument("--n-test", type=int, default=None, help="test points (default 10000)")
    ap.add_argument("--n-tau", type=int, default=None, help="grid: values of tau (default 17)")
    ap.add_argument("--n-delta", type=int, default=None, help="grid: values of delta (default 17)")
    ap.add_argument("--sizes", type=lambda t: [tuple(int(v) for v in p.split("x")) for p in t.split(",")],
                    default=None, help="sizes: DxN,DxN,... (default 10x100,16x150,40x400,100x1000)")
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                    help="the steps' arithmetic (default float64; metrics are float64 either way)")
    ap.add_argument("--out", default=None, help="output folder (default book/data/relu_grid or relu_sizes)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "markovlib_relu_grid"))
    ap.add_argument("--budget-minutes", type=float, default=90.0, help="pilot: the time budget")
    ap.add_argument("--cores", type=int, default=2, help="pilot: cores of the budget")
    args = ap.parse_args(argv)
    if args.mode == "pilot":
        return pilot(args)
    out = Path(args.out or OUT[args.mode])
    out.mkdir(parents=True, exist_ok=True)
    prov = Provenance(out, None if argv is None else ["tools/run_relu_grid.py", *argv])
    tasks, cps = plan(args)
    work = Path(args.work) / args.mode
    work.mkdir(parents=True, exist_ok=True)
    results, cpu, failed = {}, {}, {}
    todo = []
    for key, s, seeds in tasks:
        f = work / f"{key}.npz"
        if f.is_file():
            with np.load(f) as z:
                if str(z["fingerprint"]) == fingerprint(s, seeds, cps):
                    results[key] = {k: z[k] for k in z.files}
                    cpu[key] = float(z["cpu_seconds"])
                    continue
        todo.append((key, (s, seeds, cps)))
    print(f"{args.mode}: {len(tasks)} tasks, {len(tasks) - len(todo)} done before; checkpoints {cps}", flush=True)

    def on_done(o):
        if o.status != "ok":
            failed[o.key] = o.error
            return
        s, seeds, _ = dict(todo)[o.key]
        results[o.key], cpu[o.key] = o.value, float(o.value["cpu_seconds"])
        part = work / f"{o.key}.part.npz"  # written whole, then renamed: an interruption leaves no partial task file
        np.savez(part, fingerprint=fingerprint(s, seeds, cps), **o.value)
        os.replace(part, work / f"{o.key}.npz")

    run_grid(train_grid, todo, args, on_done=on_done)
    name = f"{args.mode}.npz"
    arrays = assemble(args.mode, tasks, cps, results)
    part = out / f"{name}.part.npz"
    np.savez_compressed(part, **arrays)
    os.replace(part, out / name)

    s0 = tasks[0][1]
    settings = {k: s0[k] for k in ("h", "n_teacher", "n_test", "base_lr", "dtype")}
    if args.mode == "grid":
        settings.update(d=s0["d"], n=s0["n"], taus=s0["taus"], deltas=s0["deltas"])
    else:
        settings.update(sizes=[[s["d"], s["n"]] for s in {(t[1]["d"], t[1]["n"]): t[1] for t in tasks}.values()],
                        tau=SIZE_TAUS[0], deltas=SIZE_DELTAS)
    seeds = sorted({sd for _, _, ss in tasks for sd in ss})
    manifest = {"description": __doc__, "mode": args.mode, "settings": settings, "steps": cps[-1],
                # a task trains its networks to the horizon or leaves nothing: the horizon every finished task reached
                "horizon_reached": {"steps": int(cps[-1]), "tasks_finished": f"{len(results)}/{len(tasks)}"},
                "paper_steps": PAPER["steps"], "checkpoints": cps, "seeds": seeds,
                "lr": f"base_lr / tau^2, full-batch {s0['dtype']} gradient descent",
                "data": "markovlib.richlazy.relu_networks.teacher_student(d, n, h, n_teacher, taus, deltas, seed, "
                        "n_test): numpy streams spawned from the seed (teacher, data, student, test)",
                "arrays": f"{name}: each metric of {list(METRICS)} with axes "
                          + ("(checkpoint, seed, tau, delta)" if args.mode == "grid" else
                             "(size, checkpoint, seed, delta)") + "; finite, complete, seeds, steps and the grid",
                "tasks": [[k, ss] for k, _, ss in tasks], "task_cpu_seconds": cpu,
                "failed_tasks": [[k, e] for k, e in failed.items()],
                "provenance": prov.block(seeds, [name], complete=not failed and len(results) == len(tasks))}
    (out / "manifest.json.part").write_text(json.dumps(manifest, indent=1) + "\n")
    os.replace(out / "manifest.json.part", out / "manifest.json")
    print(f"wrote {out / name} and {out / 'manifest.json'}: {len(results)} of {len(tasks)} tasks, {len(failed)} "
          f"failed; wall {manifest['provenance']['wall_seconds']} s", flush=True)
    return 1 if failed or len(results) < len(tasks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
