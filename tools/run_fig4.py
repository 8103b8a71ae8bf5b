"""Fig. 4 at the paper's scale, run once through the package's CLI; the results are committed as data.

    python tools/run_fig4.py --workers 2            # writes book/data/fig4/{curves.csv, manifest.json}
    python tools/run_fig4.py --scheduler tcp://host:8786   # on an existing dask cluster (shared file system)
    python tools/run_fig4.py --collect              # only collect the runs finished so far (an interrupted job)
    python tools/run_fig4.py --workers 2 --seeds 5-19 --tag seeds5_19   # more seeds: curves_seeds5_19.csv, ...

The runs go through dask.distributed (markovlib.book.runner): a LocalCluster of ``--workers`` processes, or the
scheduler at ``--scheduler``. Runs go to ``--work`` (default /tmp/markovlib_fig4), one folder each; a finished run
(its summary.json exists) is not run again, so an interrupted job resumes where it stopped; a run that fails (after
its retries when a worker dies) is listed in the manifest's ``failed_runs`` and the tool exits with status 1. Jobs
are submitted seed by seed, so every (chain, initialization) pair has about the same number of finished seeds
whenever the job stops.

Settings (reference Sec. 7, the optimizer settings of the authors' code): N = 1024, batch 16, d = 8, 1000 AdamW
steps, lr 2e-3, betas (0.9, 0.95), weight decay 1e-3 on the layer's weight matrices only (nanoGPT decay
groups), OneCycleLR (2 % warm-up from lr/100, cosine down to lr/5), no gradient clipping (their default), 5 seeds;
float32 on the CPU, where the authors trained under float16 autocast on a GPU.
Initializations: the standard N(0, 0.02^2) and both of the authors' guideline inits in their 2-token model, and
the guideline point (e, w) = (1, -1) of the paper's binary model. Chains: (p, q) = (0.5, 0.8) (Fig. 4,
p + q > 1) and (0.2, 0.3) (p + q < 1). Each run is one ``python -m markovlib train`` command (recorded in the
manifest with the versions). Stored per step: the training loss; every 10 steps: the held-out loss (2 batches)
and the context coefficient c-hat (the mean logit after a 1 minus after a 0: c* at the bigram predictor, 0 at
the unigram one).
"""
from __future__ import annotations

from pathlib import Path

from markovlib.book.provenance import ROOT, Provenance
from markovlib.book.runner import parse_args, run_all, train_command, write_curves, write_manifest
from markovlib.transformer.config import recipe
from markovlib.transformer.train_cli import cli_arguments

OUT = ROOT / "book" / "data" / "fig4"
CHAINS = [(0.5, 0.8), (0.2, 0.3)]
SEEDS = [0, 1, 2, 3, 4]
INITS = {  # name -> (model, init)
    "standard": ("two_token", "standard"),
    "authors_submission": ("two_token", "authors_submission"),
    "authors_public": ("two_token", "authors_public"),
    "guideline": ("binary", "guideline"),
}
# the authors' recipe (markovlib.transformer.config.RECIPES["authors_fig4"]) plus what is recorded: the held-out
# loss on 2 batches every 10 steps
RECIPE = cli_arguments(recipe("authors_fig4", eval_every=10, eval_batches=2))


def command(p, q, init, seed, out):
    model, scheme = INITS[init]
    return train_command(["--p", str(p), "--q", str(q), "--model", model, "--init", scheme, "--seed", str(seed),
                          *RECIPE], out)


def main(argv=None):
    args, work = parse_args(argv, __doc__.splitlines()[0], "markovlib_fig4", OUT, seeds=SEEDS)
    seeds = args.seeds
    curves, manifest = f"curves{args.suffix}.csv", f"manifest{args.suffix}.json"
    out_dir = Path(args.out)
    prov = Provenance(out_dir, None if argv is None else ["tools/run_fig4.py", *argv])
    jobs = []
    for seed in seeds:  # seed by seed: every (chain, init) pair has the same number of finished seeds, +-1
        for (p, q) in CHAINS:
            for init in INITS:
                out = work / f"{p}_{q}_{init}_{seed}"
                jobs.append(((p, q, init, seed), command(p, q, init, seed, out), out))
    out_dir.mkdir(parents=True, exist_ok=True)
    results, failed = run_all(jobs, args)
    write_curves(out_dir / curves, ["p", "q", "init", "seed"], ["train_loss", "eval_loss", "context_coefficient"],
                 results)
    write_manifest(out_dir / manifest, __doc__, results, prov, [curves], failed, chains=CHAINS,
                   seeds=seeds, inits={k: {"model": m, "init": s} for k, (m, s) in INITS.items()})
    print(f"wrote {out_dir / curves} and {out_dir / manifest}; {len(results)} runs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
