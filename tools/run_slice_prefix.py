"""How far the stored paper-scale runs of Part I are deterministic: re-execute the first ``--steps`` steps of every
stored run of a set (every seed, chain, initialization and optimizer) with its stored configuration, in the numeric
configuration this process runs in, and store the per-step difference to the stored curve.

    python tools/run_slice_prefix.py fig4 --config developer --steps 200        # as on a developer's machine
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4" \
        ATEN_CPU_CAPABILITY=default python tools/run_slice_prefix.py fig4 --config baseline --steps 120
    (fig4: every part of the set, book/data/fig4/manifest*.json as markovlib.book.stored.PARTS lists them)
    ... guideline (book/data/guideline: the four runs the chapter's slice re-executes, every stored seed)
    ... lowrank   (book/data/lowrank: every stored run)
    ... escape    (book/data/escape: every stored run)
    ... phase     (book/data/beyond_two_states, the 5000-step K-state set: seeds PHASE_SEEDS of every cell and arm)

The sets and what is compared:
- fig4: the training loss at every step (column ``abs_diff``);
- guideline: c-hat / c* and the held-out loss at every evaluation (``ratio_diff``, ``loss_diff``);
- lowrank: the held-out loss and the largest difference of the seven top-singular-value fractions at every
  evaluation (``loss_diff``, ``fraction_diff``);
- escape: c-hat / c*, the held-out loss, the canonical projection (e, w) and E(e, w) at every evaluation
  (``ratio_diff``, ``loss_diff``, ``projection_diff``, ``energy_diff``);
- phase: the held-out loss at every evaluation (every 250 steps; ``loss_diff``).

The runs go through dask.distributed like every tool (``--workers``, ``--scheduler``, ``--allowed-failures``; the
worker processes inherit the numeric configuration of the environment, which the manifest records); a failed run is
reported and the tool exits with status 1, writing nothing.

Writes ``book/data/<set>/slice_prefix.csv`` (replacing the rows of the same ``--config``, keeping the others) and
``manifest_slice_prefix.json`` (one provenance block per configuration, each with the file's sha256). The chapters
authors_fig4, init_guideline and low_rank read these files to cap their re-executed slices inside the measured
deterministic prefix and to set their tolerances from the measured agreement there.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd

from markovlib.book.provenance import ROOT, Provenance
from markovlib.book.runner import add_cluster_arguments, run_grid

DATA = ROOT / "book" / "data"
# the guideline chapter's slice keys: (experiment, p, q, init, optimizer)
GUIDELINE_KEYS = [("grid", 0.5, 0.8, "standard", "adamw"), ("grid", 0.5, 0.8, "guideline", "adamw"),
                  ("plateau", 0.75, 0.75, "standard", "adamw"), ("plateau", 0.75, 0.75, "standard", "sgd")]


def _trainer(config):
    import torch

    from markovlib.transformer.training import Trainer

    torch.set_num_threads(1)
    return Trainer(**config, progress=False)


def slice_fig4(config, steps, ref):
    """Train loss at every step: |live - stored| for the first ``steps`` steps."""
    tr = _trainer(config)
    for _ in range(steps):
        tr.train_step()
    live = np.array([r["train_loss"] for r in tr.history])
    return {"step": list(range(1, steps + 1)), "abs_diff": np.abs(live - np.asarray(ref)).tolist()}


def slice_evals(config, steps, ref, columns):
    """At every evaluation up to ``steps``: |live - stored| of each column; a list of columns is one maximum."""
    tr = _trainer(config)
    tr.train(stop_at=steps)
    live = pd.DataFrame([r for r in tr.history if "eval_loss" in r]).set_index("step")
    ref = pd.DataFrame(ref).set_index("step").loc[live.index]
    out = {"step": live.index.tolist()}
    for name, cols in columns.items():
        cols = [cols] if isinstance(cols, str) else cols
        out[name] = np.max([np.abs(live[c].to_numpy() - ref[c].to_numpy()) for c in cols], axis=0).tolist()
    return out


def tasks_fig4(steps):
    from markovlib.book.stored import PARTS, read_parts
    from markovlib.transformer.config import recipe

    stored, parts = read_parts(DATA / "fig4", PARTS["fig4"], same=["chains", "inits"])  # every part, every seed
    manifest = parts[0]
    seeds = [s for part in parts for s in part["seeds"]]
    out = []
    for seed in seeds:
        for p, q in manifest["chains"]:
            for init, spec in manifest["inits"].items():
                st = stored[(stored.p == p) & (stored.q == q) & (stored.init == init) & (stored.seed == seed)]
                ref = st.dropna(subset=["train_loss"]).sort_values("step").train_loss.to_numpy()[:steps]
                config = dict(p=p, q=q, model=spec["model"], init=spec["init"], seed=seed, eval_every=0,
                              device="cpu", **recipe("authors_fig4"))
                out.append((dict(p=p, q=q, init=init, seed=seed), slice_fig4, (config, len(ref), ref.tolist())))
    return out, seeds


def tasks_guideline(steps):
    from run_guideline import grid_config, plateau_config

    curves = pd.read_csv(DATA / "guideline" / "curves.csv.gz")
    seeds = sorted(int(s) for s in curves.seed.unique())
    out = []
    for exp, p, q, init, opt in GUIDELINE_KEYS:
        for seed in seeds:
            config = grid_config(p, q, init, seed) if exp == "grid" else plateau_config(p, q, opt, seed)
            st = curves[(curves.experiment == exp) & (curves.p == p) & (curves.q == q) & (curves.init == init)
                        & (curves.optimizer == opt) & (curves.seed == seed) & (curves.step <= steps)]
            ref = st[["step", "coefficient_ratio", "eval_loss"]].to_dict("list")
            out.append((dict(experiment=exp, p=p, q=q, init=init, optimizer=opt, seed=seed), slice_evals,
                        (config, steps, ref, {"ratio_diff": "coefficient_ratio", "loss_diff": "eval_loss"})))
    return out, seeds


def tasks_lowrank(steps):
    from run_lowrank import EVAL_EVERY, OPTIMIZERS

    from markovlib.transformer.config import RANK_COLUMNS, recipe

    manifest = json.loads((DATA / "lowrank" / "manifest.json").read_text())
    curves = pd.read_csv(DATA / "lowrank" / "curves.csv")
    fractions = [c for c in RANK_COLUMNS if c != "top_fraction_embedding"]
    out = []
    for seed in manifest["seeds"]:
        for init, opts in manifest["inits"].items():
            for opt in opts:
                config = dict(recipe("sec51_sgd", **OPTIMIZERS[opt], seed=seed, eval_every=EVAL_EVERY, eval_batches=2),
                              p=manifest["chain"][0], q=manifest["chain"][1], init=init, device="cpu")
                st = curves[(curves.init == init) & (curves.optimizer == opt) & (curves.seed == seed)
                            & (curves.step <= steps)]
                ref = st[["step", "eval_loss", *fractions]].to_dict("list")
                out.append((dict(init=init, optimizer=opt, seed=seed), slice_evals,
                            (config, steps, ref, {"loss_diff": "eval_loss", "fraction_diff": fractions})))
    return out, manifest["seeds"]


def slice_escape(config, steps, ref):
    """The escape runs (markovlib.transformer.escape): the first ``steps`` steps (a constant learning rate, so the
    prefix of a shorter run is the prefix of the stored one); |live - stored| at every evaluation."""
    from markovlib.transformer.escape import train_with_energy

    live = pd.DataFrame(train_with_energy({**config, "steps": steps})).set_index("step")
    ref = pd.DataFrame(ref).set_index("step").loc[live.index]
    diff = (live - ref).abs()
    return {"step": live.index.tolist(), "ratio_diff": diff.coefficient_ratio.tolist(),
            "loss_diff": diff.eval_loss.tolist(), "projection_diff": diff[["e", "w"]].max(axis=1).tolist(),
            "energy_diff": diff.energy.tolist()}


def tasks_escape(steps):
    from run_escape import config

    manifest = json.loads((DATA / "escape" / "manifest.json").read_text())
    curves = pd.read_csv(DATA / "escape" / "curves.csv.gz")
    curves = curves[curves.step <= steps]
    out = []
    for (p, q, opt, lr, seed), st in curves.groupby(["p", "q", "optimizer", "lr", "seed"], sort=True):
        ref = st.drop(columns=["p", "q", "optimizer", "lr", "seed"]).to_dict("list")
        key = dict(p=p, q=q, optimizer=opt, lr=lr, seed=seed)
        out.append((key, slice_escape, (config(p, q, opt, lr, seed), steps, ref)))
    return out, manifest["seeds"]


PHASE_SEEDS = [0, 1, 2]  # the phase set's seeds measured (every cell and arm); the chapter re-executes a subset


def slice_phase(key, settings, steps, ref):
    """A K-state run of ``tools/run_beyond.py --part phase`` (constant lr: the prefix of a shorter run is the prefix
    of the stored one); |live - stored held-out loss| at every evaluation up to ``steps``."""
    import torch

    from markovlib.beyond import kstate_training as kt
    from markovlib.beyond import multistate as ms

    torch.set_num_threads(1)
    K, p = int(key["K"]), float(key["p"])
    r = kt.train_kstate(ms.symmetric_sampler(K, p), K, ms.symmetric_entropy_rate(K, p),
                        ms.symmetric_marginal_entropy(K), init=key["init"], seed=int(key["seed"]), lr=float(key["lr"]),
                        optimizer=key["optimizer"], tied=bool(key["tied"]), **{**settings, "steps": steps})
    steps_live = [s for s, _ in r["history"]]
    return {"step": steps_live, "loss_diff": [abs(v - ref[s]) for s, v in r["history"]]}


def tasks_phase(steps):
    folder = DATA / "beyond_two_states"
    manifest = json.loads((folder / "manifest_phase.json").read_text())
    curves = pd.read_csv(folder / "phase_curves.csv")
    curves = curves[curves.seed.isin(PHASE_SEEDS) & (curves.step <= steps)]
    names = ["K", "p", "optimizer", "tied", "lr", "init", "seed"]
    out = []
    for vals, st in curves.groupby(names, sort=True):
        key = {n: (v.item() if hasattr(v, "item") else v) for n, v in zip(names, vals)}
        out.append((key, slice_phase, (key, manifest["settings"], steps, dict(zip(st.step, st.loss)))))
    return out, PHASE_SEEDS


SETS = {"fig4": tasks_fig4, "guideline": tasks_guideline, "lowrank": tasks_lowrank, "escape": tasks_escape,
        "phase": tasks_phase}


def _run(fn, *args):  # one dask task: the set's slice function on its arguments
    return fn(*args)


def main(argv=None):
    ap = add_cluster_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("set", choices=sorted(SETS), help="the stored set, under book/data/")
    ap.add_argument("--config", required=True, help="label of the numeric configuration (developer, baseline, ...)")
    ap.add_argument("--steps", type=int, default=200, help="steps re-executed per stored run")
    args = ap.parse_args(argv)
    if args.steps < 1:
        ap.error(f"--steps must be a positive integer, got {args.steps}")
    out_dir = DATA / ("beyond_two_states" if args.set == "phase" else args.set)
    prov = Provenance(out_dir, argv=None if argv is None else [__file__, *argv])
    planned, seeds = SETS[args.set](args.steps)
    tasks = [("_".join(str(v) for v in key.values()), (fn, *fargs)) for key, fn, fargs in planned]
    outcomes = run_grid(_run, tasks, args)
    failed = [o.key for o in outcomes if o.status != "ok"]
    if failed:
        print(f"failed runs (nothing written): {failed}", file=sys.stderr)
        return 1
    rows = []
    for (key, _, _), o in zip(planned, outcomes):
        res = o.value
        diffs = [c for c in res if c != "step"]
        for i, step in enumerate(res["step"]):
            rows.append(dict(config=args.config, **key, step=step, **{c: float(res[c][i]) for c in diffs}))
        worst = max(max(res[c]) for c in diffs) if res["step"] else float("nan")
        print(f"{key}: max over {len(res['step'])} compared steps {worst:.2e}", flush=True)
    out = out_dir / "slice_prefix.csv"
    new = pd.DataFrame(rows)
    if out.exists():
        old = pd.read_csv(out)
        new = pd.concat([old[old.config != args.config], new], ignore_index=True)
    new.to_csv(out, index=False, float_format="%.3e")
    manifest_path = out_dir / "manifest_slice_prefix.json"
    runs = json.loads(manifest_path.read_text()).get("configurations", {}) if manifest_path.exists() else {}
    runs[args.config] = prov.block(seeds, [out.name], steps=args.steps)
    for block in runs.values():  # every block's checksum is of the file as it now stands (all configurations)
        block["files"] = runs[args.config]["files"]
    manifest_path.write_text(json.dumps({"description": __doc__, "configurations": runs,
                                         "provenance": runs[args.config]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
