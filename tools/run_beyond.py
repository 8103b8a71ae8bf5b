"""The paper-scale grid of the chapter book/beyond_two_states.ipynb: does a unigram trap exist for K > 2?

    nice python tools/run_beyond.py --out book/data/beyond_two_states

trains the K-state single-layer transformer (markovlib.beyond.multistate.train_kstate) on the symmetric K-state chain
for K = 3, 5, 10, two p on each side of p* = (K-1)/K, the standard and the guideline-like init, SEEDS seeds,
and writes runs.csv (one row per run), curves.csv (the held-out loss every 50 steps) and manifest.json (the
exact command, settings, seeds, package versions, git commit). One CPU thread; deterministic.
"""
import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from markovlib.beyond import multistate as ms

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stored_runs import git_commit  # noqa: E402

GRID = {3: [0.1, 0.4, 0.833, 0.967], 5: [0.12, 0.48, 0.9, 0.98], 10: [0.135, 0.54, 0.95, 0.99]}
SETTINGS = dict(d=8, length=64, batch=32, steps=500, lr=2e-3, eval_batch=256, eval_every=50)
SEEDS = list(range(5))
TRAP = 0.5  # trapped: final loss nearer H(pi) than the entropy rate (normalized gap > 0.5), fixed beforehand


def version(pkg):
    out = subprocess.run([sys.executable, "-m", "pip", "show", pkg], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Version")), "?")


def write(out, rows, curves):
    for name, data in (("runs.csv", rows), ("curves.csv", curves)):
        with open(out / name, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(data)


def write_manifest(out, args, commit, runs, versions):
    manifest = dict(command="nice -n 10 python tools/run_beyond.py --out " + str(args.out), grid=GRID,
                    settings=SETTINGS, seeds=SEEDS, inits=list(ms.KSTATE_INITS), trap_threshold=TRAP,
                    threads=1, dtype="float32", optimizer="Adam(betas=(0.9, 0.95)), constant lr, no weight decay",
                    versions=versions, python=sys.version.split()[0],
                    git_commit=commit, runs=runs, runs_planned=len(SEEDS) * sum(map(len, GRID.values())) * 2)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


LAG = dict(n_states=3, p=0.1, lags=[1, 2, 3, 4, 6], seeds=[0, 1])


def main_lag(args):
    """Lag-k switching chains (markovlib.beyond.multistate.lag_switching_sample): the trained loss against k."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    commit = git_commit()
    versions = {k: version(k) for k in ("torch", "numpy", "scipy")}
    K, p = LAG["n_states"], LAG["p"]
    rows = []
    for seed in LAG["seeds"]:
        for lag in LAG["lags"]:
            y = ms.lag_switching_yardsticks(K, p, lag)
            for init in ms.KSTATE_INITS:
                def sampler(b, n, s, lag=lag):
                    return ms.lag_switching_sample(K, p, lag, b, n, s)
                r = ms.train_kstate(sampler, K, y["entropy_rate"], y["unigram"], init=init, seed=seed, **SETTINGS)
                rows.append(dict(K=K, p=p, lag=lag, init=init, seed=seed, final_loss=repr(r["final_loss"]),
                                 entropy_rate=repr(y["entropy_rate"]), bigram=repr(y["bigram"]),
                                 unigram=repr(y["unigram"])))
                print(lag, init, seed, round(r["final_loss"], 3), flush=True)
                with open(out / "lag_runs.csv", "w", newline="") as fh:
                    w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)
    manifest = dict(command="nice -n 10 python tools/run_beyond.py --part lag --out " + str(args.out), **LAG,
                    settings=SETTINGS, inits=list(ms.KSTATE_INITS), threads=1, dtype="float32",
                    optimizer="Adam(betas=(0.9, 0.95)), constant lr, no weight decay", versions=versions,
                    python=sys.version.split()[0], git_commit=commit, runs=len(rows))
    (out / "manifest_lag.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="book/data/beyond_two_states")
    ap.add_argument("--part", choices=["symmetric", "lag"], default="symmetric")
    args = ap.parse_args()
    if args.part == "lag":
        return main_lag(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    commit = git_commit()
    versions = {k: version(k) for k in ("torch", "numpy", "scipy")}
    rows, curves = [], []
    t0 = time.time()
    for seed in SEEDS:  # seeds outermost: a partial grid still covers every cell
        for K, ps in GRID.items():
            for p in ps:
                rate, marg = ms.symmetric_entropy_rate(K, p), ms.symmetric_marginal_entropy(K)
                for init in ms.KSTATE_INITS:
                    r = ms.train_kstate(ms.symmetric_sampler(K, p), K, rate, marg, init=init, seed=seed, **SETTINGS)
                    rows.append(dict(K=K, p=p, lam=ms.symmetric_eigenvalue(K, p), init=init, seed=seed,
                                     final_loss=repr(r["final_loss"]), entropy_rate=repr(rate),
                                     marginal_entropy=repr(marg), gap=repr(r["gap"]), trapped=int(r["gap"] > TRAP)))
                    curves += [dict(K=K, p=p, init=init, seed=seed, step=s, loss=repr(v)) for s, v in r["history"]]
                    print(K, p, init, seed, round(r["gap"], 3), round(time.time() - t0), flush=True)
                    write(out, rows, curves)
                    write_manifest(out, args, commit, len(rows), versions)


if __name__ == "__main__":
    main()
