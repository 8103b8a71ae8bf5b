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

Other sets (the SGD drift law's tests, book/_drafts/sgd_drift_law.md) are made with the options below into their own
folder; the defaults are the stored set's settings:

    python tools/run_escape.py --out book/data/escape_long --optimizers sgd --lrs 7.5,8,8.25 --chains 0.5:0.8 \
        --steps 300000 --eval-every 500 --seeds 0-19 --tag lrs --checkpoint-every 20000 --workers 2

With ``--seed-batch`` (plain SGD only) each arm's seeds run together in one task,
:class:`markovlib.transformer.seed_batch.SeedBatchSGD`: the same initializations, batches and evaluations as the
Trainer's runs, the weights of all seeds stacked, about 15 times less CPU time per run at batch 1; the runs agree
with the Trainer's to float32 rounding (tests/test_seed_batch.py), and their work files carry ``_seedbatch``.

--optimizers (keys of OPTIMIZER_ARMS), --lrs (the same rates for every chosen optimizer), --chains (p:q,...),
--steps, --eval-every, --batch, --seeds and --tag (a set made in parts: runs_TAG.csv, curves_TAG.csv.gz,
manifest_TAG.json), --no-clip (grad_clip 0 instead of 1) and --checkpoint-every (a long run saves its Trainer
checkpoint in its work folder and resumes from it after an interruption). A finished run is kept in --work under a
name that carries every setting, so sets with other settings never reuse each other's runs.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from markovlib.book.provenance import ROOT, Provenance, versions
from markovlib.book.runner import ENV, parse_args, run_grid, write_gz

BATCH = 16

OUT = ROOT / "book" / "data" / "escape"
SEEDS = list(range(20))
CHAINS = [(0.5, 0.8), (0.75, 0.75)]
LRS = {"sgd": (1.0, 4.0), "momentum": (0.1, 0.4), "adam": (5e-4, 2e-3), "adamw": (5e-4, 2e-3)}
STEPS, EVAL_EVERY = 10_000, 50
ESCAPE_RATIO = 0.5
KEY = ["p", "q", "optimizer", "lr", "seed"]


def config(p, q, optimizer, lr, seed, steps=None, eval_every=None, batch=None, clip=True, checkpoint_every=0):
    """The run's Trainer knobs: escape_config with the set's steps, evaluation spacing and batch (defaults: the stored
    set's), gradient clipping at norm 1 unless ``clip`` is False, and Trainer checkpoints every ``checkpoint_every``
    steps (0: none)."""
    from markovlib.transformer.escape import escape_config

    cfg = escape_config(p, q, optimizer, lr, seed, STEPS if steps is None else steps,
                        eval_every=EVAL_EVERY if eval_every is None else eval_every,
                        batch=BATCH if batch is None else batch)
    if not clip:
        cfg["grad_clip"] = 0.0
    if checkpoint_every:
        cfg["checkpoint_every"] = checkpoint_every
    return cfg


def settings(args=None):
    """The set's grid and run settings: the module's defaults, replaced by the command line's options."""
    a = vars(args) if args is not None else {}
    opts = a.get("optimizers") or list(LRS)
    lrs = {o: (tuple(a["lrs"]) if a.get("lrs") else tuple(LRS[o])) for o in opts}
    return {"seeds": a.get("seeds") or list(SEEDS), "chains": a.get("chains") or list(CHAINS), "lrs": lrs,
            "steps": a.get("steps") or STEPS, "eval_every": a.get("eval_every") or EVAL_EVERY,
            "batch": a.get("batch") or BATCH, "clip": not a.get("no_clip", False),
            "checkpoint_every": a.get("checkpoint_every") or 0, "seed_batch": bool(a.get("seed_batch"))}


def jobs(st=None):
    """(key, config) of every run, seed by seed (an interrupted job has about equal seeds per arm)."""
    st = settings() if st is None else st
    kw = {k: st[k] for k in ("steps", "eval_every", "batch", "clip", "checkpoint_every")}
    return [((p, q, opt, lr, seed), config(p, q, opt, lr, seed, **kw))
            for seed in st["seeds"] for p, q in st["chains"] for opt, lrs in st["lrs"].items() for lr in lrs]


def write_run(path, record):
    """A run's file, written whole or not at all: to a temporary name, then renamed."""
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)


def train_one(cfg, path):
    """Train one configuration (unless ``path`` holds its result); return its evaluations (a dask task). With
    ``checkpoint_every`` in ``cfg`` the run keeps its Trainer checkpoint in the folder ``path`` without .json and
    resumes from it."""
    path = Path(path)
    if not path.is_file():
        from markovlib.transformer.escape import train_with_energy

        ckpt = path.with_suffix("") if cfg.get("checkpoint_every") else None
        write_run(path, {"config": cfg, "evals": train_with_energy(cfg, out=ckpt)})
    return json.loads(path.read_text())["evals"]


def train_arm(key, seeds, cfg, paths, ckpt):
    """Train the plain-SGD arm ``key`` (p, q, "sgd", lr) for the ``seeds`` whose file in ``paths`` is missing, all at
    once (:class:`~markovlib.transformer.seed_batch.SeedBatchSGD`, checkpoint ``ckpt`` every ``checkpoint_every``
    steps); write each seed's file; return the evaluations of every seed (a dask task)."""
    paths = [Path(x) for x in paths]
    todo = [s for s, x in zip(seeds, paths) if not x.is_file()]
    if todo:
        from markovlib.transformer.seed_batch import SeedBatchSGD

        p, q, _, lr = key
        run = SeedBatchSGD(p, q, todo, lr, cfg["steps"], eval_every=cfg["eval_every"], batch=cfg["batch"],
                           clip=cfg.get("grad_clip", 1.0))
        evals = run.train(out=ckpt, checkpoint_every=cfg.get("checkpoint_every", 0), progress=True)
        for s, x in zip(seeds, paths):
            if s in evals:
                write_run(x, {"config": {**cfg, "seed": s, "runner": "seed_batch"}, "evals": evals[s]})
        Path(ckpt).unlink(missing_ok=True)
    return [json.loads(x.read_text())["evals"] for x in paths]


def _name(key, cfg=None, seed_batch=False):
    """The run's file in the work folder: its key, the settings that differ from the stored set's, and
    ``_seedbatch`` for a run of the seed-batched runner."""
    extra = ""
    if cfg is not None:
        base = config(*key)
        extra = "".join(f"_{k}{cfg.get(k)}" for k in ("steps", "eval_every", "batch", "grad_clip")
                        if cfg.get(k) != base.get(k))
    return "_".join(str(k) for k in key) + extra + ("_seedbatch" if seed_batch else "") + ".json"


def _chains(text):
    import argparse

    try:
        out = [tuple(float(x) for x in c.split(":")) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"chains must be p:q,p:q,...; got {text!r}") from None
    if not out or any(len(c) != 2 or not (0 < c[0] < 1 and 0 < c[1] < 1) for c in out):
        raise argparse.ArgumentTypeError(f"chains must be p:q pairs with 0 < p, q < 1; got {text!r}")
    return out


def _positive_list(text):
    import argparse

    try:
        out = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"lrs must be comma-separated numbers > 0; got {text!r}") from None
    if not out or any(not x > 0 for x in out):
        raise argparse.ArgumentTypeError(f"lrs must be comma-separated numbers > 0; got {text!r}")
    return out


def _optimizers(text):
    import argparse

    from markovlib.transformer.escape import OPTIMIZER_ARMS

    out = text.split(",")
    if not out or any(o not in OPTIMIZER_ARMS for o in out) or len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"optimizers must be distinct names from {sorted(OPTIMIZER_ARMS)}; got "
                                         f"{text!r}")
    return out


def _extra(ap):
    def pos_int(name):
        def f(text):
            import argparse

            try:
                v = int(text)
            except ValueError:
                v = 0
            if v <= 0:
                raise argparse.ArgumentTypeError(f"{name} must be a positive integer; got {text!r}")
            return v
        return f
    ap.add_argument("--optimizers", type=_optimizers, default=None, help="e.g. sgd,momentum (default: all four)")
    ap.add_argument("--lrs", type=_positive_list, default=None, help="learning rates for every chosen optimizer")
    ap.add_argument("--chains", type=_chains, default=None, help="p:q,p:q (default: the two stored chains)")
    ap.add_argument("--steps", type=pos_int("steps"), default=None, help=f"steps per run (default {STEPS})")
    ap.add_argument("--eval-every", type=pos_int("eval-every"), default=None,
                    help=f"steps between evaluations (default {EVAL_EVERY})")
    ap.add_argument("--batch", type=pos_int("batch"), default=None, help=f"sequences per batch (default {BATCH})")
    ap.add_argument("--no-clip", action="store_true", help="no gradient clipping (default: clipping at norm 1)")
    ap.add_argument("--checkpoint-every", type=pos_int("checkpoint-every"), default=None,
                    help="save and resume each run's Trainer every so many steps (long runs)")
    ap.add_argument("--seed-batch", action="store_true",
                    help="plain SGD only: run each arm's seeds together (SeedBatchSGD)")


def main(argv=None):
    from markovlib.transformer.escape import EVAL_COLUMNS, escape_step

    args, work = parse_args(argv, __doc__.splitlines()[0], "markovlib_escape", OUT, seeds=SEEDS, extra=_extra)
    st = settings(args)
    if st["steps"] % st["eval_every"]:
        raise SystemExit(f"--steps ({st['steps']}) must be a multiple of --eval-every ({st['eval_every']})")
    out_dir = Path(args.out)
    prov = Provenance(out_dir, None if argv is None else ["tools/run_escape.py", *argv])
    todo = jobs(st)
    if st["seed_batch"] and set(st["lrs"]) != {"sgd"}:
        raise SystemExit("--seed-batch runs plain SGD only: give --optimizers sgd")
    names = {key: _name(key, cfg, st["seed_batch"]) for key, cfg in todo}
    if args.collect:
        results = [(key, json.loads((work / names[key]).read_text())["evals"]) for key, _ in todo
                   if (work / names[key]).is_file()]
        done = {key for key, _ in results}
        failed = [(key, "not finished") for key, _ in todo if key not in done]
    elif st["seed_batch"]:
        arms = {}
        for key, cfg in todo:
            arms.setdefault(key[:4], []).append((key, cfg))
        tasks = []
        for arm, runs in arms.items():
            seeds = [k[4] for k, _ in runs]
            settings_part = names[runs[0][0]][len("_".join(map(str, runs[0][0]))):-5]  # e.g. _steps..._seedbatch
            ckpt = work / f"{'_'.join(map(str, arm))}_seeds{'-'.join(map(str, seeds))}{settings_part}.pt"
            tasks.append(("_".join(map(str, arm)) + "_seedbatch",
                          (arm, seeds, {**runs[0][1], "seed": None}, [str(work / names[k]) for k, _ in runs],
                           str(ckpt))))
        outcomes = run_grid(train_arm, tasks, args)
        results, failed = [], []
        for (arm, runs), o in zip(arms.items(), outcomes):
            if o.status == "ok":
                results += [(k, ev) for (k, _), ev in zip(runs, o.value)]
            else:
                failed += [(k, o.error) for k, _ in runs]
    else:
        outcomes = run_grid(train_one, [(names[key][:-5], (cfg, str(work / names[key]))) for key, cfg in todo],
                            args)
        results = [(key, o.value) for (key, _), o in zip(todo, outcomes) if o.status == "ok"]
        failed = [(key, o.error) for (key, _), o in zip(todo, outcomes) if o.status != "ok"]
    out_dir.mkdir(parents=True, exist_ok=True)
    results.sort(key=lambda r: r[0])
    sfx = args.suffix
    with open(out_dir / f"runs{sfx}.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([*KEY, "steps", "escape_step"])
        for key, ev in results:
            t = escape_step([r["step"] for r in ev], [r["coefficient_ratio"] for r in ev], ESCAPE_RATIO)
            w.writerow([*key, ev[-1]["step"], "" if t is None else t])
    write_gz(out_dir / f"curves{sfx}.csv.gz", [*KEY, *EVAL_COLUMNS],
             [[*key, *(r[c] if c == "step" else repr(float(r[c])) for c in EVAL_COLUMNS)]
              for key, ev in results for r in ev])
    files = [f"runs{sfx}.csv", f"curves{sfx}.csv.gz"]
    kw = {k: st[k] for k in ("steps", "eval_every", "batch", "clip", "checkpoint_every")}
    c0 = st["chains"][0]
    manifest = {"description": __doc__, "versions": versions(), "seeds": st["seeds"],
                "chains": [list(c) for c in st["chains"]], "lrs": {k: list(v) for k, v in st["lrs"].items()},
                "steps": st["steps"], "eval_every": st["eval_every"], "batch": st["batch"],
                "grad_clip": 1.0 if st["clip"] else 0.0, "escape_ratio": ESCAPE_RATIO,
                "runner": "seed_batch (markovlib.transformer.seed_batch.SeedBatchSGD)" if st["seed_batch"]
                else "trainer (markovlib.transformer.escape.train_with_energy)",
                "configs": {opt: config(*c0, opt, lrs[0], st["seeds"][0], **kw) for opt, lrs in st["lrs"].items()},
                "runs": [list(key) for key, _ in results], "runs_planned": len(todo), "environment": ENV,
                "failed_runs": [[list(key), err] for key, err in failed],
                "provenance": prov.block(st["seeds"], files, complete=not failed)}
    (out_dir / f"manifest{sfx}.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {out_dir}/runs{sfx}.csv, curves{sfx}.csv.gz and manifest{sfx}.json; {len(results)} runs, "
          f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
