"""The paper-scale grid of the chapter book/beyond_two_states.ipynb: does a unigram trap exist for K > 2?

    nice python tools/run_beyond.py --out book/data/beyond_two_states              # K-state phase diagram
    nice python tools/run_beyond.py --part lag --out book/data/beyond_two_states   # lag-k chains
    nice python tools/run_beyond.py --part phase --out book/data/beyond_two_states # Adam, plain SGD, untied head
    ... --scheduler tcp://host:8786     # on an existing dask cluster (default: a LocalCluster of --workers)

trains the K-state single-layer transformer (markovlib.beyond.kstate_training.train_kstate) on the symmetric
K-state chain for K = 3, 5, 10, two p on each side of p* = (K-1)/K, the standard and the guideline-like init,
SEEDS seeds, and writes runs.csv (one row per run), curves.csv (the held-out loss every 50 steps) and manifest.json (the
exact command, settings, seeds, package versions, git commit and dirty flag, CPU, wall time, sha256 of the files).
``--part phase``: the same (K, p) grid, longer (PHASE_SETTINGS: 5000 steps) and SEEDS_PHASE seeds, for the arms
PHASE_ARMS: Adam and plain SGD (tied head) for both inits and Adam with the untied head (a separate unembedding
matrix) for the standard init; writes phase_runs.csv, phase_curves.csv (every 250 steps) and manifest_phase.json.
Every run is one dask task (markovlib.book.runner) on one CPU thread; deterministic. The files are rewritten as runs
finish (in the grid's order, seeds outermost), so a partial grid still covers every cell; a run that fails (after
its retries when a worker dies) is listed in the manifest's ``failed_runs`` and the tool exits with status 1.
"""
import argparse
import csv
import json
import sys
from pathlib import Path

from markovlib.book.provenance import Provenance, versions
from markovlib.book.runner import add_cluster_arguments, run_grid

GRID = {3: [0.1, 0.4, 0.833, 0.967], 5: [0.12, 0.48, 0.9, 0.98], 10: [0.135, 0.54, 0.95, 0.99]}
SETTINGS = dict(d=8, length=64, batch=32, steps=500, lr=2e-3, eval_batch=256, eval_every=50)
SEEDS = list(range(5))
TRAP = 0.5  # trapped: final loss nearer H(pi) than the entropy rate (normalized gap > 0.5), fixed beforehand
LAG = dict(n_states=3, p=0.1, lags=[1, 2, 3, 4, 6], seeds=[0, 1])
INITS = ("standard", "guideline_like")  # markovlib.beyond.kstate_training.KSTATE_INITS (checked in main)
COMMON = dict(threads=1, dtype="float32", optimizer="Adam(betas=(0.9, 0.95)), constant lr, no weight decay")
PHASE_SETTINGS = dict(d=8, length=64, batch=32, steps=5000, eval_batch=256, eval_every=250)
SEEDS_PHASE = list(range(10))
SGD_LR = 1.0  # plain SGD: the largest of {0.1, 0.3, 1, 3} stable in the pilot (seed 0, 1000 steps, K 3 and 10 on both
# sides of p*, both inits: lr 3 diverges from the guideline-like init at K 3; lr 1 learns fastest where SGD learns)
PHASE_ARMS = [  # (optimizer, tied, lr, init), markovlib.beyond.kstate_training.train_kstate's arguments
    ("adam", True, 2e-3, "standard"), ("adam", True, 2e-3, "guideline_like"),
    ("sgd", True, SGD_LR, "standard"), ("sgd", True, SGD_LR, "guideline_like"),
    ("adam", False, 2e-3, "standard"),
]
COMMON_PHASE = dict(threads=1, dtype="float32", optimizers={
    "adam": "Adam(betas=(0.9, 0.95)), constant lr, no weight decay",
    "sgd": "SGD (no momentum), constant lr, no weight decay"})


def symmetric_run(K, p, init, seed, settings):
    """One run of the K-state grid (a dask task): its row of runs.csv and its rows of curves.csv."""
    import torch

    from markovlib.beyond import kstate_training as kt
    from markovlib.beyond import multistate as ms
    torch.set_num_threads(1)
    rate, marg = ms.symmetric_entropy_rate(K, p), ms.symmetric_marginal_entropy(K)
    r = kt.train_kstate(ms.symmetric_sampler(K, p), K, rate, marg, init=init, seed=seed, **settings)
    row = dict(K=K, p=p, lam=ms.symmetric_eigenvalue(K, p), init=init, seed=seed, final_loss=repr(r["final_loss"]),
               entropy_rate=repr(rate), marginal_entropy=repr(marg), gap=repr(r["gap"]), trapped=int(r["gap"] > TRAP))
    return row, [dict(K=K, p=p, init=init, seed=seed, step=s, loss=repr(v)) for s, v in r["history"]]


def phase_run(K, p, optimizer, tied, lr, init, seed, settings):
    """One run of the phase part (a dask task): its row of phase_runs.csv and its rows of phase_curves.csv."""
    import math

    import torch

    from markovlib.beyond import kstate_training as kt
    from markovlib.beyond import multistate as ms
    torch.set_num_threads(1)
    rate, marg = ms.symmetric_entropy_rate(K, p), ms.symmetric_marginal_entropy(K)
    r = kt.train_kstate(ms.symmetric_sampler(K, p), K, rate, marg, init=init, seed=seed, lr=lr, optimizer=optimizer,
                        tied=tied, **settings)
    arm = dict(K=K, p=p, init=init, optimizer=optimizer, tied=int(tied), lr=lr, seed=seed)
    row = dict(arm, lam=ms.symmetric_eigenvalue(K, p), final_loss=repr(r["final_loss"]), entropy_rate=repr(rate),
               marginal_entropy=repr(marg), gap=repr(r["gap"]), trapped=int(r["gap"] > TRAP),
               finite=int(math.isfinite(r["final_loss"])))
    return row, [dict(arm, step=s, loss=repr(v)) for s, v in r["history"]]


def lag_run(K, p, lag, init, seed, settings):
    """One run of the lag-k part (a dask task): its row of lag_runs.csv."""
    import torch

    from markovlib.beyond import kstate_training as kt
    from markovlib.beyond import multistate as ms
    torch.set_num_threads(1)
    y = ms.lag_switching_yardsticks(K, p, lag)

    def sampler(b, n, s):
        return ms.lag_switching_sample(K, p, lag, b, n, s)
    r = kt.train_kstate(sampler, K, y["entropy_rate"], y["unigram"], init=init, seed=seed, **settings)
    return dict(K=K, p=p, lag=lag, init=init, seed=seed, final_loss=repr(r["final_loss"]),
                entropy_rate=repr(y["entropy_rate"]), bigram=repr(y["bigram"]), unigram=repr(y["unigram"]))


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main(argv=None):
    from markovlib.beyond.kstate_training import KSTATE_INITS

    assert tuple(KSTATE_INITS) == INITS
    ap = add_cluster_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--out", default="book/data/beyond_two_states")
    ap.add_argument("--part", choices=["symmetric", "lag", "phase"], default="symmetric")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prov = Provenance(out, None if argv is None else ["tools/run_beyond.py", *argv])
    lag = args.part == "lag"
    settings, common = SETTINGS, COMMON
    if lag:
        keys = [(LAG["n_states"], LAG["p"], k, init, seed) for seed in LAG["seeds"] for k in LAG["lags"]
                for init in INITS]
        fn, files, name = lag_run, ["lag_runs.csv"], "manifest_lag.json"
        seeds, head = LAG["seeds"], dict(**LAG, settings=SETTINGS, inits=list(INITS))
    elif args.part == "phase":
        assert all(init in INITS for *_, init in PHASE_ARMS)
        keys = [(K, p, *arm[:3], arm[3], seed) for seed in SEEDS_PHASE for K, ps in GRID.items() for p in ps
                for arm in PHASE_ARMS]
        fn, files, name = phase_run, ["phase_runs.csv", "phase_curves.csv"], "manifest_phase.json"
        settings, common, seeds = PHASE_SETTINGS, COMMON_PHASE, SEEDS_PHASE
        head = dict(grid=GRID, settings=PHASE_SETTINGS, seeds=SEEDS_PHASE, trap_threshold=TRAP,
                    arms=[dict(optimizer=o, tied=t, lr=lr, init=i) for o, t, lr, i in PHASE_ARMS])
    else:
        keys = [(K, p, init, seed) for seed in SEEDS for K, ps in GRID.items() for p in ps for init in INITS]
        fn, files, name = symmetric_run, ["runs.csv", "curves.csv"], "manifest.json"
        seeds, head = SEEDS, dict(grid=GRID, settings=SETTINGS, seeds=SEEDS, inits=list(INITS), trap_threshold=TRAP)
    tasks = [("_".join(map(str, key)), (*key, settings)) for key in keys]
    order = {t[0]: i for i, t in enumerate(tasks)}
    done, failed = {}, {}

    def write(final=False):
        ok = [done[k] for k in sorted(done, key=order.get)]
        if ok:
            if lag:
                write_csv(out / files[0], ok)
            else:
                write_csv(out / files[0], [row for row, _ in ok])
                write_csv(out / files[1], [c for _, curve in ok for c in curve])
        manifest = dict(command=prov.command, **head, **common, versions=versions(), python=sys.version.split()[0],
                        git_commit=prov.git["commit"], runs=len(ok), runs_planned=len(tasks),
                        failed_runs=[[k, e] for k, e in failed.items()])
        if final or ok:
            manifest["provenance"] = prov.block(seeds, [f for f in files if (out / f).is_file()],
                                                complete=final and not failed)
        (out / name).write_text(json.dumps(manifest, indent=2) + "\n")

    def on_done(o):
        if o.status == "ok":
            done[o.key] = o.value
        else:
            failed[o.key] = o.error
        write()

    run_grid(fn, tasks, args, on_done=on_done)
    write(final=True)
    print(f"wrote {out}: {len(done)} runs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
