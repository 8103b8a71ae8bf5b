"""Sec. 5.1 (Figs. 3, 6, 7) at the paper's scale, run once through the package's CLI; the results are committed
as data.

    python tools/run_lowrank.py --workers 2       # writes book/data/lowrank/{curves.csv, final.csv, manifest.json}
    python tools/run_lowrank.py --collect         # only collect the runs finished so far (an interrupted job)

The runs go through dask.distributed like every tool (tools/stored_runs.py: ``--workers``, ``--scheduler``,
``--allowed-failures``); failed runs are listed in the manifest's ``failed_runs`` and the tool exits with status 1.

Settings (reference Sec. 7; markovlib.transformer.config.RECIPES["sec51_sgd"]): chain p = 0.2, q = 0.3, N = 1024, d = 8,
batch 16, 800 steps, every Gaussian weight N(0, 0.001^2), no gradient clipping, float32 on the CPU, one thread.
The paper gives no SGD step size, so two are run (2 and 5, the chapter's; plain SGD, no momentum, no weight decay, the
package's default schedule: 2 % linear warm-up, cosine down to 10 %), and AdamW as in the authors' code (lr 2e-3,
betas (0.9, 0.95), weight decay 1e-3, same schedule). Initializations: the tiny Gaussian start ("standard"), the
authors' random rank-one start as the issue describes it ("authors_rank_one": alpha in {+-1}^d / sqrt(d),
e = |0.1 z|, rank-one W_V, W_O, W_1, W_2 with independent random factors), and the exact canonical manifold
("rank_one", under SGD step 5 and AdamW only: it is invariant, so one step size suffices to show it). Seeds 0, 1, 2.
Recorded every 20 steps: the held-out loss (2 batches) and the top singular fraction s_1^2 / sum s_i^2 of every
weight matrix; at the end (from the final checkpoint): the fractions, the alignment of the top singular vectors
with the embedding e, and the flatness min_i |e_i| / max_i |e_i| of e (1 on the hypercube).
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stored_runs import ROOT, Provenance, parse_args, run_all, train_command, write_curves, write_manifest  # noqa: E402

from markovlib.transformer.config import RANK_COLUMNS, recipe
from markovlib.transformer.train_cli import cli_arguments

OUT = ROOT / "book" / "data" / "lowrank"
P, Q = 0.2, 0.3
SEEDS = [0, 1, 2]
STEPS = 800
OPTIMIZERS = {  # name -> knobs on top of the recipe
    "sgd_2": dict(optimizer="sgd", lr=2.0),
    "sgd_5": dict(optimizer="sgd", lr=5.0),
    "adamw": dict(optimizer="adamw", lr=2e-3, betas=(0.9, 0.95), weight_decay=1e-3),
}
INITS = {"standard": list(OPTIMIZERS), "authors_rank_one": list(OPTIMIZERS), "rank_one": ["sgd_5", "adamw"]}
EVAL_EVERY = 20
MATRICES = [c.removeprefix("top_fraction_") for c in RANK_COLUMNS if c != "top_fraction_embedding"]
# the side of each matrix's top singular vector that should carry the shared direction alpha (reference Sec. 3)
SIDES = {"W_V": "right", "W_O": "left", "W_1": "right", "W_2": "left", "positional": "right"}


def command(init, opt, seed, out):
    knobs = recipe("sec51_sgd", **OPTIMIZERS[opt], seed=seed, eval_every=EVAL_EVERY, eval_batches=2,
                   checkpoint_every=STEPS)
    return train_command(["--p", str(P), "--q", str(Q), "--init", init, *cli_arguments(knobs)], out)


def final_measures(out):
    """Fractions, alignment with e and flatness of e of the final weights (float64 SVDs of the checkpoint)."""
    state = torch.load(Path(out) / "checkpoint.pt", map_location="cpu", weights_only=False)
    W = {k: v.double().numpy() for k, v in state["model"].items()}
    e = W["embedding"].reshape(-1)
    res = {"flatness": float(np.abs(e).min() / np.abs(e).max())}
    for m in MATRICES:
        U, S, Vh = np.linalg.svd(W[m])
        res[f"fraction_{m}"] = float(S[0] ** 2 / np.sum(S ** 2))
        if m in SIDES:
            vec = Vh[0] if SIDES[m] == "right" else U[:, 0]
            res[f"alignment_{m}"] = float(abs(vec @ e) / np.linalg.norm(e))
    return res


def main(argv=None):
    args, work = parse_args(argv, __doc__.splitlines()[0], "markovlib_lowrank", OUT)
    out_dir = Path(args.out)
    prov = Provenance(out_dir, None if argv is None else ["tools/run_lowrank.py", *argv])
    jobs = [((init, opt, seed), command(init, opt, seed, work / f"{init}_{opt}_{seed}"), work / f"{init}_{opt}_{seed}")
            for seed in SEEDS for init, opts in INITS.items() for opt in opts]
    results, failed = run_all(jobs, args)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_curves(out_dir / "curves.csv", ["init", "optimizer", "seed"],
                 ["eval_loss", *[f"top_fraction_{m}" for m in MATRICES]], results, keep=lambda r: r.get("eval_loss"))
    finals = [(key, final_measures(work / f"{key[0]}_{key[1]}_{key[2]}")) for key, _, _ in results]
    names = list(finals[0][1]) if finals else []
    with open(out_dir / "final.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["init", "optimizer", "seed", *names])
        for key, res in finals:
            w.writerow([*key, *[repr(res[n]) for n in names]])
    write_manifest(out_dir / "manifest.json", __doc__, results, prov, ["curves.csv", "final.csv"], failed, chain=[P, Q],
                   seeds=SEEDS, optimizers=OPTIMIZERS, inits=INITS)
    print(f"wrote {out_dir}/curves.csv, final.csv and manifest.json; {len(results)} runs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
