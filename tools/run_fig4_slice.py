"""Measure how far the stored Fig. 4 runs (book/data/fig4) are deterministic: re-execute the first ``--steps``
steps of EVERY stored run (every seed, chain and initialization) with the stored configuration and record the
per-step difference of the training loss to the stored curve.

    python tools/run_fig4_slice.py --config developer            # as on a developer's machine
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4" \
        ATEN_CPU_CAPABILITY=default python tools/run_fig4_slice.py --config baseline --steps 100

The runs go through dask.distributed like every tool (``--workers``, ``--scheduler``, ``--allowed-failures``; the
worker processes inherit the numeric configuration of the environment); a failed run is reported and the tool exits
with status 1, writing nothing.

Writes (appends to, replacing the rows of the same --config) ``book/data/fig4/slice_prefix.csv``: one row per run
and step, columns config, p, q, init, seed, step, abs_diff. The chapter authors_fig4 reads this file to cap its
re-executed slice below the smallest deterministic prefix over all stored seeds, and sets its tolerance from the
measured agreement there.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stored_runs import Provenance, add_cluster_arguments, run_grid  # noqa: E402

from markovlib.transformer.config import recipe  # noqa: E402
from markovlib.transformer.training import Trainer  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "book" / "data" / "fig4"
MANIFEST = DATA / "manifest_slice_prefix.json"


def slice_one(p_, q_, spec, seed, ref):
    """Re-execute one stored run for len(ref) steps; the per-step |train loss - stored|."""
    torch.set_num_threads(1)
    tr = Trainer(p=p_, q=q_, model=spec["model"], init=spec["init"], seed=seed, eval_every=0, device="cpu",
                 progress=False, **recipe("authors_fig4"))
    for _ in range(len(ref)):
        tr.train_step()
    return np.abs(np.array([r["train_loss"] for r in tr.history]) - np.asarray(ref)).tolist()


def main(argv=None):
    ap = add_cluster_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--config", required=True, help="label of the numeric configuration")
    ap.add_argument("--steps", type=int, default=200, help="steps re-executed per stored run")
    args = ap.parse_args(argv)
    prov = Provenance(DATA, argv=None if argv is None else [__file__, *argv])
    stored = pd.read_csv(DATA / "curves.csv")
    manifest = json.loads((DATA / "manifest.json").read_text())
    tasks, keys = [], []
    for seed in manifest["seeds"]:
        for p_, q_ in manifest["chains"]:
            for init, spec in manifest["inits"].items():
                st = stored[(stored.p == p_) & (stored.q == q_) & (stored.init == init) & (stored.seed == seed)]
                ref = st.dropna(subset=["train_loss"]).sort_values("step").train_loss.to_numpy()[:args.steps]
                tasks.append((f"s{seed}_p{p_}_q{q_}_{init}", (p_, q_, spec, seed, ref.tolist())))
                keys.append((p_, q_, init, seed))
    outcomes = run_grid(slice_one, tasks, args)
    failed = [o.key for o in outcomes if o.status != "ok"]
    if failed:
        print(f"failed runs (nothing written): {failed}", file=sys.stderr)
        return 1
    rows = []
    for (p_, q_, init, seed), o in zip(keys, outcomes):
        diff = np.asarray(o.value)
        rows += [dict(config=args.config, p=p_, q=q_, init=init, seed=seed, step=i + 1, abs_diff=float(d))
                 for i, d in enumerate(diff)]
        print(f"seed {seed} ({p_}, {q_}) {init:20s} max over {diff.size} steps {diff.max():.2e}", flush=True)
    out = DATA / "slice_prefix.csv"
    new = pd.DataFrame(rows)
    if out.exists():
        old = pd.read_csv(out)
        new = pd.concat([old[old.config != args.config], new], ignore_index=True)
    new.to_csv(out, index=False, float_format="%.3e")
    runs = {}  # one provenance block per configuration (each run of this tool adds or replaces its own)
    if MANIFEST.exists():
        runs = json.loads(MANIFEST.read_text()).get("configurations", {})
    runs[args.config] = prov.block(manifest["seeds"], [out.name], steps=args.steps)
    MANIFEST.write_text(json.dumps({"description": __doc__, "configurations": runs,
                                    "provenance": runs[args.config]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
