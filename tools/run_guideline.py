"""The initialization guideline's two large experiments (book/init_guideline.ipynb, claims 3 and 4) at 20 seeds per
cell, run once; the results are committed as data.

    python tools/run_guideline.py --workers 2   # writes book/data/guideline/{runs,curves}.csv.gz, manifest.json
    python tools/run_guideline.py --collect       # only collect the runs finished so far (an interrupted job)
    python tools/run_guideline.py --chains 0.7:0.5,0.9:0.5 --experiments grid --tag pgq --workers 2
                                                  # the grid experiment on other chains, files *_pgq (issue 35)

The runs go through dask.distributed like every tool (markovlib.book.runner: ``--workers``, ``--scheduler``,
``--allowed-failures``). Each run is one :func:`markovlib.transformer.runs.train_many` configuration exactly as the
chapter builds it (so the chapter can re-run any stored run live and compare); a finished run is kept as a JSON file
in ``--work`` (default /tmp/markovlib_guideline) and not run again, so an interrupted job resumes. Failed runs are
listed in the manifest's ``failed_runs`` and the tool exits with status 1.

Settings (the chapter's parameters cell): the full binary model, d = 8, context 64, batch 16, float32 on the CPU,
one thread per run; AdamW lr 2e-3 with the package's defaults (betas (0.9, 0.95), weight decay 1e-3, 2 % warm-up
and cosine down to 10 %); plain SGD lr 1 without momentum or weight decay; the standard initialization
N(0, 0.02^2); the guideline point (e, w) = (1, -1). Recorded at every evaluation (4 held-out batches): the held-out
loss and c-hat / c* (the context coefficient over its bigram value: 1 at the bigram predictor, 0 at the unigram).

- "grid" (claim 4, the phase diagram): every chain (p, q) with p, q in GRID_VALUES and |p + q - 1| >= MARGIN,
  both initializations, AdamW, GRID_STEPS steps, evaluated every GRID_EVAL steps, seeds 0..19.
- "plateau" (claim 3): the standard initialization on the chains PLATEAU_CHAINS (p + q > 1, |c*| >= 2), AdamW and
  plain SGD, LONG_STEPS steps, evaluated every LONG_EVAL steps, seeds 0..19.

Stored: runs.csv.gz (one row per run: its key and the first evaluation step after which c-hat / c* stays above
BIGRAM_RATIO to the end of the run, empty if never) and curves.csv.gz (one row per evaluation of every run).
"""
from __future__ import annotations

import json
from pathlib import Path

from markovlib.book.provenance import ROOT, Provenance, versions
from markovlib.book.runner import ENV, parse_args, run_grid, write_gz

OUT = ROOT / "book" / "data" / "guideline"
SEEDS = list(range(20))
MARGIN = 0.2
GRID_VALUES = [0.2, 0.5, 0.8]
GRID_STEPS, GRID_EVAL = 400, 50
PLATEAU_CHAINS = [(0.75, 0.75)]
LONG_STEPS, LONG_EVAL = 2000, 25
BIGRAM_RATIO = 0.5
COMMON = dict(device="cpu", length=64, batch=16, init_std=0.02)
ADAMW = dict(lr=2e-3)
SGD = dict(optimizer="sgd", lr=1.0, weight_decay=0.0)
GUIDELINE = {"e": 1.0, "w": -1.0}
COLUMNS = ["experiment", "p", "q", "init", "optimizer", "seed"]


def grid_cells(chains=None):
    """The phase diagram's chains: ``chains`` (a list of (p, q)) or every (p, q) of GRID_VALUES at the margin."""
    if chains is not None:
        return list(chains)
    return [(a, b) for a in GRID_VALUES for b in GRID_VALUES if abs(a + b - 1) >= MARGIN - 1e-12]


def chain_list(text):
    """``p:q,p:q`` -> [(p, q), ...] with p, q in (0, 1) and |p + q - 1| >= MARGIN (argparse type of ``--chains``)."""
    import argparse

    try:
        out = [tuple(float(v) for v in part.split(":")) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"chains must be p:q,p:q,..., got {text!r}") from None
    for c in out:
        if len(c) != 2 or not all(0 < v < 1 for v in c) or abs(sum(c) - 1) < MARGIN - 1e-12:
            raise argparse.ArgumentTypeError(f"each chain must be p:q with p, q in (0, 1) and |p + q - 1| >= {MARGIN},"
                                             f" got {c}")
    return out


def grid_config(p, q, init, seed):
    """The chapter's phase-diagram configuration (its grid_configs)."""
    return dict(COMMON, p=p, q=q, steps=GRID_STEPS, **ADAMW, init=init,
                init_kwargs=GUIDELINE if init == "guideline" else {}, seed=seed, eval_every=GRID_EVAL)


def plateau_config(p, q, optimizer, seed):
    """The chapter's plateau configuration (its long_configs)."""
    opt = dict(optimizer="adamw", **ADAMW) if optimizer == "adamw" else SGD
    return dict(COMMON, p=p, q=q, steps=LONG_STEPS, init="standard", seed=seed, eval_every=LONG_EVAL, **opt)


def jobs(seeds=SEEDS, chains=None, experiments=("grid", "plateau")):
    """(key, config) of every run, seed by seed (an interrupted job has about equal seeds per cell)."""
    out = []
    for seed in seeds:
        if "grid" in experiments:
            out += [(("grid", p, q, init, "adamw", seed), grid_config(p, q, init, seed))
                    for init in ("standard", "guideline") for p, q in grid_cells(chains)]
        if "plateau" in experiments:
            out += [(("plateau", p, q, "standard", opt, seed), plateau_config(p, q, opt, seed))
                    for p, q in PLATEAU_CHAINS for opt in ("adamw", "sgd")]
    return out


def _extra(ap):
    ap.add_argument("--chains", type=chain_list, default=None, help="grid: these chains p:q,... instead of the grid")
    ap.add_argument("--experiments", type=experiment_list, default=("grid", "plateau"),
                    help="grid, plateau or grid,plateau (default both)")


def experiment_list(text):
    """``grid``, ``plateau`` or ``grid,plateau`` -> a tuple (argparse type of ``--experiments``)."""
    import argparse

    out = tuple(text.split(","))
    if not out or not set(out) <= {"grid", "plateau"}:
        raise argparse.ArgumentTypeError(f"experiments must be grid, plateau or grid,plateau, got {text!r}")
    return out


def steps_to_bigram(steps, ratios, threshold=BIGRAM_RATIO):
    """First evaluation step from which c-hat / c* stays above ``threshold`` to the end (None if never)."""
    for i in range(len(ratios)):
        if all(r > threshold for r in ratios[i:]):
            return steps[i]
    return None


def train_one(config, path):
    """Train one configuration (unless ``path`` holds its result); return its evaluations (a dask task)."""
    path = Path(path)
    if not path.is_file():
        from markovlib.transformer.runs import train_many

        run = train_many([config], workers=1, progress=False)[0]
        rows = [[r["step"], r["eval_loss"], r["coefficient_ratio"]] for r in run["history"] if "eval_loss" in r]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"config": config, "evals": rows}))
        tmp.replace(path)
    return json.loads(path.read_text())["evals"]


def _name(key):
    return "_".join(str(k) for k in key) + ".json"



def main(argv=None):
    args, work = parse_args(argv, __doc__.splitlines()[0], "markovlib_guideline", OUT, seeds=SEEDS, extra=_extra)
    experiments = args.experiments
    out_dir = Path(args.out)
    prov = Provenance(out_dir, None if argv is None else ["tools/run_guideline.py", *argv])
    todo = jobs(args.seeds, args.chains, experiments)
    sfx = args.suffix
    if args.collect:
        results = [(key, cfg, json.loads((work / _name(key)).read_text())["evals"]) for key, cfg in todo
                   if (work / _name(key)).is_file()]
        done = {key for key, _, _ in results}
        failed = [(key, "not finished") for key, _ in todo if key not in done]
    else:
        outcomes = run_grid(train_one, [(_name(key)[:-5], (cfg, str(work / _name(key)))) for key, cfg in todo], args)
        results = [(key, cfg, o.value) for (key, cfg), o in zip(todo, outcomes) if o.status == "ok"]
        failed = [(key, o.error) for (key, _), o in zip(todo, outcomes) if o.status != "ok"]
    out_dir.mkdir(parents=True, exist_ok=True)
    results.sort(key=lambda r: (r[0][0], r[0][1], r[0][2], r[0][3], r[0][4], r[0][5]))
    write_gz(out_dir / f"runs{sfx}.csv.gz", [*COLUMNS, "steps", "steps_to_bigram"],
             [[*key, cfg["steps"], "" if (t := steps_to_bigram([e[0] for e in ev], [e[2] for e in ev])) is None else t]
              for key, cfg, ev in results])
    write_gz(out_dir / f"curves{sfx}.csv.gz", [*COLUMNS, "step", "eval_loss", "coefficient_ratio"],
             [[*key, e[0], repr(float(e[1])), repr(float(e[2]))] for key, _, ev in results for e in ev])
    files = [f"runs{sfx}.csv.gz", f"curves{sfx}.csv.gz"]
    manifest = {"description": __doc__, "versions": versions(), "seeds": args.seeds, "margin": MARGIN,
                "experiments": list(experiments),
                "grid_values": GRID_VALUES, "grid_cells": [list(c) for c in grid_cells(args.chains)],
                "plateau_chains": [list(c) for c in PLATEAU_CHAINS], "bigram_ratio": BIGRAM_RATIO,
                "configs": {"grid_standard": grid_config("P", "Q", "standard", "SEED"),
                            "grid_guideline": grid_config("P", "Q", "guideline", "SEED"),
                            "plateau_adamw": plateau_config("P", "Q", "adamw", "SEED"),
                            "plateau_sgd": plateau_config("P", "Q", "sgd", "SEED")},
                "runs": [list(key) for key, _, _ in results], "environment": ENV,
                "failed_runs": [[list(key), err] for key, err in failed],
                "provenance": prov.block(args.seeds, files)}
    tmp = out_dir / f"manifest{sfx}.part"
    tmp.write_text(json.dumps(manifest, indent=1) + "\n")
    tmp.replace(out_dir / f"manifest{sfx}.json")  # whole or not at all
    print(f"wrote {out_dir}/runs{sfx}.csv.gz, curves{sfx}.csv.gz and manifest{sfx}.json; {len(results)} runs, "
          f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
