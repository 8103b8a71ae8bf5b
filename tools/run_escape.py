"""Trap or plateau (book/trap_or_plateau.ipynb): the standard initialization on two chains with p + q > 1 under four
optimizers at two learning rates each, 20 seeds, run once; the results are committed as data.

    python tools/run_escape.py --workers 2     # writes book/data/escape/{runs.csv, curves.csv.gz, manifest.json}
    python tools/run_escape.py --collect       # only collect the runs finished so far (an interrupted job)

Each run is one :func:`markovlib.transformer.escape.train_with_energy` call on
:func:`markovlib.transformer.escape.escape_config` (so the chapter can re-run any stored run live and compare); a
finished run is kept as a JSON file in ``--work`` (default /tmp/markovlib_escape) and not run again. The runs go
through dask.distributed like every tool (``--workers``, ``--scheduler``, ``--allowed-failures``); failed runs are
listed in the manifest and the tool exits with status 1.

Settings: the full binary model (softmax attention, d = 8), context N = 64, batch 16, float32 on the CPU, one thread
per run, the standard initialization N(0, 0.02^2); a constant learning rate from step 0 (no warm-up, no decay of the
rate, so the horizon only censors), gradient clipping at norm 1. Optimizers (markovlib.transformer.escape.
OPTIMIZER_ARMS) and learning rates LRS: plain SGD {1, 4}; SGD with momentum 0.9 {0.1, 0.4} (the same effective
steps lr / (1 - 0.9)); Adam (AdamW with zero decay) and AdamW (decay 1e-3) {5e-4, 2e-3}. Chains CHAINS: (0.5, 0.8)
(Fig. 4's chain, p + q - 1 = 0.3) and (0.75, 0.75) (the guideline's plateau chain, p + q - 1 = 0.5). STEPS steps,
evaluated every EVAL_EVERY steps (4 held-out batches): the held-out loss, c-hat / c*, the canonical projection
(e, w) of canonical_scalars, E(e, w) (Lemma 1) and W_1's top singular fraction.

Stored: runs.csv (one row per run: its key, its steps and the first evaluation step at which c-hat / c* reaches
ESCAPE_RATIO, empty if never: censored at STEPS) and curves.csv.gz (one row per evaluation of every run).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from markovlib.book.provenance import ROOT, Provenance, versions
from markovlib.book.runner import ENV, parse_args, run_grid, write_gz

OUT = ROOT / "book" / "data" / "escape"
SEEDS = list(range(20))
CHAINS = [(0.5, 0.8), (0.75, 0.75)]
LRS = {"sgd": (1.0, 4.0), "momentum": (0.1, 0.4), "adam": (5e-4, 2e-3), "adamw": (5e-4, 2e-3)}
STEPS, EVAL_EVERY = 10_000, 50
ESCAPE_RATIO = 0.5
KEY = ["p", "q", "optimizer", "lr", "seed"]


def config(p, q, optimizer, lr, seed):
    from markovlib.transformer.escape import escape_config

    return escape_config(p, q, optimizer, lr, seed, STEPS, eval_every=EVAL_EVERY)


def jobs():
    """(key, config) of every run, seed by seed (an interrupted job has about equal seeds per arm)."""
    return [((p, q, opt, lr, seed), config(p, q, opt, lr, seed))
            for seed in SEEDS for p, q in CHAINS for opt, lrs in LRS.items() for lr in lrs]


def train_one(cfg, path):
    """Train one configuration (unless ``path`` holds its result); return its evaluations (a dask task)."""
    path = Path(path)
    if not path.is_file():
        from markovlib.transformer.escape import train_with_energy

        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"config": cfg, "evals": train_with_energy(cfg)}))
        tmp.replace(path)
    return json.loads(path.read_text())["evals"]


def _name(key):
    return "_".join(str(k) for k in key) + ".json"


def main(argv=None):
    from markovlib.transformer.escape import EVAL_COLUMNS, escape_step

    args, work = parse_args(argv, __doc__.splitlines()[0], "markovlib_escape", OUT)
    out_dir = Path(args.out)
    prov = Provenance(out_dir, None if argv is None else ["tools/run_escape.py", *argv])
    todo = jobs()
    if args.collect:
        results = [(key, json.loads((work / _name(key)).read_text())["evals"]) for key, _ in todo
                   if (work / _name(key)).is_file()]
        done = {key for key, _ in results}
        failed = [(key, "not finished") for key, _ in todo if key not in done]
    else:
        outcomes = run_grid(train_one, [(_name(key)[:-5], (cfg, str(work / _name(key)))) for key, cfg in todo], args)
        results = [(key, o.value) for (key, _), o in zip(todo, outcomes) if o.status == "ok"]
        failed = [(key, o.error) for (key, _), o in zip(todo, outcomes) if o.status != "ok"]
    out_dir.mkdir(parents=True, exist_ok=True)
    results.sort(key=lambda r: r[0])
    with open(out_dir / "runs.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([*KEY, "steps", "escape_step"])
        for key, ev in results:
            t = escape_step([r["step"] for r in ev], [r["coefficient_ratio"] for r in ev], ESCAPE_RATIO)
            w.writerow([*key, ev[-1]["step"], "" if t is None else t])
    write_gz(out_dir / "curves.csv.gz", [*KEY, *EVAL_COLUMNS],
             [[*key, *(r[c] if c == "step" else repr(float(r[c])) for c in EVAL_COLUMNS)]
              for key, ev in results for r in ev])
    files = ["runs.csv", "curves.csv.gz"]
    manifest = {"description": __doc__, "versions": versions(), "seeds": SEEDS,
                "chains": [list(c) for c in CHAINS], "lrs": {k: list(v) for k, v in LRS.items()},
                "steps": STEPS, "eval_every": EVAL_EVERY, "escape_ratio": ESCAPE_RATIO,
                "configs": {opt: config(*CHAINS[0], opt, LRS[opt][0], 0) for opt in LRS},  # chain 0, seed 0
                "runs": [list(key) for key, _ in results], "runs_planned": len(todo), "environment": ENV,
                "failed_runs": [[list(key), err] for key, err in failed],
                "provenance": prov.block(SEEDS, files, complete=not failed)}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {out_dir}/runs.csv, curves.csv.gz and manifest.json; {len(results)} runs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
