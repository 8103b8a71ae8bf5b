"""Why two batchings of the same ReLU run disagree in their activation patterns at long horizons (issue 36, the end
map's cross-check; book/_drafts/relu_endmap.md): trains one network of the paper's grid (d = 100, n = 1000, h = 50)
for --steps full-batch float64 GD steps, then counts the training pre-activations w_k . x_i within --eps of the kink
and those whose sign differs between two summation orders of the same product (X @ W.T and einsum).

    python tools/relu_kinks.py --seed 100 --tau 0.1 --delta 1 --steps 50000      # about 35 s on an idle core

One BLAS thread (threadpoolctl), as the grid's tasks.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from markovlib.richlazy.relu_batch import train_networks
from markovlib.richlazy.relu_grid import PAPER, problems, settings_check


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--tau", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--eps", type=float, default=1e-12)
    args = ap.parse_args(argv)
    try:
        s = settings_check(dict(PAPER, taus=[args.tau], deltas=[args.delta]))
        if args.steps < 1 or not args.eps > 0:
            raise ValueError(f"steps must be >= 1 and eps > 0, got {args.steps}, {args.eps}")
        p = problems(s, [args.seed])
    except ValueError as exc:
        print(f"relu_kinks: {exc}", file=sys.stderr)
        return 2
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        r = train_networks(p["X"], p["y"], p["a0"], p["W0"], p["lr"][None], [0, args.steps], X_test=p["X_test"],
                           y_test=p["y_test"], keep_weights=True)
    W, X = r["W_t"][-1, 0, 0, 0], p["X"][0]
    Z1, Z2 = X @ W.T, np.einsum("nd,hd->nh", X, W, optimize=False)
    print(f"seed {args.seed}, tau {args.tau:g}, delta {args.delta:g}, {args.steps} steps: test loss "
          f"{r['test_loss'][-1].item():.3g}; {int(np.sum(np.abs(Z1) < args.eps))} of {Z1.size} training "
          f"pre-activations within {args.eps:g} of the kink, {int(np.sum((Z1 > 0) != (Z2 > 0)))} with another sign "
          f"in another summation order; smallest |w_k| {np.linalg.norm(W, axis=1).min():.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
