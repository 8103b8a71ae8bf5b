"""How far a live re-run of the stored guideline runs (book/data/guideline) drifts from the stored curves over their
first steps, in the numeric configuration this process runs in (book/init_guideline.ipynb sets its slice tolerance
and prefix from this measurement, made in both of CI's configurations).

    python tools/measure_guideline_slice.py --steps 100 > developer.json
    OMP_NUM_THREADS=1 NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4" ATEN_CPU_CAPABILITY=default \
        python tools/measure_guideline_slice.py --steps 100 > ci.json

For each slice key (the chapter's SLICE_KEYS) and every stored seed: the largest |c-hat/c* - stored| and
|held-out loss - stored| over the evaluations up to each evaluation step.
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
from run_guideline import OUT, grid_config, plateau_config  # noqa: E402

from markovlib.transformer.training import Trainer

SLICE_KEYS = [("grid", 0.5, 0.8, "standard", "adamw"), ("grid", 0.5, 0.8, "guideline", "adamw"),
              ("plateau", 0.75, 0.75, "standard", "adamw"), ("plateau", 0.75, 0.75, "standard", "sgd")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--data", default=str(OUT), help="the stored set (default book/data/guideline)")
    ap.add_argument("--seeds", default=None, help="comma-separated stored seeds (default: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    curves = pd.read_csv(Path(args.data) / "curves.csv.gz")
    out = {}
    for exp, p, q, init, opt in SLICE_KEYS:
        seeds = sorted(curves.seed.unique()) if args.seeds is None else [int(s) for s in args.seeds.split(",")]
        for seed in seeds:
            cfg = grid_config(p, q, init, int(seed)) if exp == "grid" else plateau_config(p, q, opt, int(seed))
            tr = Trainer(**cfg, progress=False)
            tr.train(stop_at=args.steps)
            live = pd.DataFrame([r for r in tr.history if "eval_loss" in r])
            st = curves[(curves.experiment == exp) & (curves.p == p) & (curves.q == q) & (curves.init == init)
                        & (curves.optimizer == opt) & (curves.seed == seed)].set_index("step")
            d_r = np.abs(live.coefficient_ratio.to_numpy() - st.loc[live.step, "coefficient_ratio"].to_numpy())
            d_l = np.abs(live.eval_loss.to_numpy() - st.loc[live.step, "eval_loss"].to_numpy())
            out[f"{exp}_{p}_{q}_{init}_{opt}_{seed}"] = {"steps": live.step.tolist(),
                                                          "ratio": np.maximum.accumulate(d_r).tolist(),
                                                          "loss": np.maximum.accumulate(d_l).tolist()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
