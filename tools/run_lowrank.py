"""Sec. 5.1 (Figs. 3, 6, 7) at the paper's scale, run once through the package's CLI; the results are committed
as data.

    python tools/run_lowrank.py --workers 2       # writes book/data/lowrank/{curves.csv, final.csv, manifest.json}
    python tools/run_lowrank.py --collect         # only collect the runs finished so far (an interrupted job)
    python tools/run_lowrank.py --workers 2 --seeds 3-9 --tag seeds3_9              # more seeds, a part of its own
    python tools/run_lowrank.py --workers 2 --seeds 0-9 --noise 1e-5 --tag perturbed  # the perturbed rank-one start

The runs go through dask.distributed like every tool (markovlib.book.runner: ``--workers``, ``--scheduler``,
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

``--noise X``: instead of the grid above, the canonical rank-one start pushed off the manifold by N(0, X^2) noise on
every weight but the bias (``TrainConfig.init_noise``; the same rank-one point as the unperturbed seed), under SGD
step 5 and AdamW (init label ``rank_one_noise``): does training bring it back to rank one?
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
import torch

from markovlib.book.provenance import ROOT, Provenance
from markovlib.book.runner import parse_args, run_all, train_command, write_curves, write_manifest
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


NOISY = {"rank_one_noise": ["sgd_5", "adamw"]}  # --noise: the perturbed rank-one start


def command(init, opt, seed, out, noise=0.0):
    knobs = recipe("sec51_sgd", **OPTIMIZERS[opt], seed=seed, eval_every=EVAL_EVERY, eval_batches=2,
                   checkpoint_every=STEPS, **({"init_noise": noise} if noise else {}))
    scheme = "rank_one" if init == "rank_one_noise" else init
    return train_command(["--p", str(P), "--q", str(Q), "--init", scheme, *cli_arguments(knobs)], out)


def noise_level(text):
    try:
        x = float(text)
    except ValueError:
        x = float("nan")
    if not 0 <= x < 1e-2:
        raise argparse.ArgumentTypeError(f"noise must be a number in [0, 0.01), got {text!r}")
    return x


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
    args, work = parse_args(argv, __doc__.splitlines()[0], "markovlib_lowrank", OUT, seeds=SEEDS,
                            extra=lambda ap: ap.add_argument("--noise", type=noise_level, default=0.0,
                                                             help="the perturbed rank-one start with this noise std"))
    out_dir = Path(args.out)
    prov = Provenance(out_dir, None if argv is None else ["tools/run_lowrank.py", *argv])
    inits = NOISY if args.noise else INITS
    tag = f"_noise{args.noise:g}" if args.noise else ""  # work folders of perturbed runs apart from the others
    jobs = [((init, opt, seed), command(init, opt, seed, work / f"{init}{tag}_{opt}_{seed}", args.noise),
             work / f"{init}{tag}_{opt}_{seed}") for seed in args.seeds for init, opts in inits.items() for opt in opts]
    curves, final = f"curves{args.suffix}.csv", f"final{args.suffix}.csv"
    results, failed = run_all(jobs, args)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_curves(out_dir / curves, ["init", "optimizer", "seed"],
                 ["eval_loss", *[f"top_fraction_{m}" for m in MATRICES]], results, keep=lambda r: r.get("eval_loss"))
    folder = {key: out for key, _, out in jobs}
    finals = [(key, final_measures(folder[key])) for key, _, _ in results]
    names = list(finals[0][1]) if finals else []
    with open(out_dir / final, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["init", "optimizer", "seed", *names])
        for key, res in finals:
            w.writerow([*key, *[repr(res[n]) for n in names]])
    write_manifest(out_dir / f"manifest{args.suffix}.json", __doc__, results, prov, [curves, final], failed,
                   chain=[P, Q], seeds=args.seeds, optimizers=OPTIMIZERS, inits=inits, init_noise=args.noise)
    print(f"wrote {out_dir}/{curves}, {final}, manifest{args.suffix}.json; {len(results)} runs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
