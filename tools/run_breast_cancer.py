"""The breast-cancer study (Fig. 4 of "Topological obstruction to the training of shallow ReLU neural
networks") at the paper's scale, run once; the rows are committed as data.

    python tools/run_breast_cancer.py          # writes book/data/breast_cancer/{results.csv, manifest.json}

It executes the chapter book/topo_breast_cancer.ipynb through papermill with 100 initializations per
(width, n_plus) cell and the chapter's protocol (below, passed explicitly and recorded in the manifest); the
chapter's training cell writes one row per run to results.csv. About 15 minutes on one core (one BLAS thread).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stored_runs import git_commit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "topo_breast_cancer.ipynb"
PROTOCOL = {"seed": 0, "split_seed": 0, "test_size": 0.3, "widths": [2, 3, 4, 5, 6, 7, 8, 9], "c_abs": 1.0,
            "lr": 0.05, "steps": 1500, "n_inits": 100}


def versions():
    import numpy
    import scipy
    import sklearn
    import torch

    import markovlib
    dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout)
    return {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "torch": torch.__version__, "markovlib": markovlib.__version__,
            "git_commit": git_commit(), "git_dirty": dirty, "machine": platform.machine(), "blas_threads": 1}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-inits", type=int, default=PROTOCOL["n_inits"], help="initializations per cell")
    ap.add_argument("--out", default=str(ROOT / "book" / "data" / "breast_cancer"), help="output folder")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    params = dict(PROTOCOL, n_inits=args.n_inits)
    cmd = [sys.executable, "-m", "papermill", str(CHAPTER), str(out / "executed.ipynb"), "--cwd", str(ROOT),
           "--no-progress-bar", "--log-level", "WARNING", "-p", "results_csv", str(out / "results.csv")]
    (out / "parameters.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in params.items()))
    cmd += ["-f", str(out / "parameters.yaml")]
    manifest = {"description": __doc__, "command": "python tools/run_breast_cancer.py"
                + ("" if args.n_inits == PROTOCOL["n_inits"] else f" --n-inits {args.n_inits}"),
                "papermill": " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd)),
                "parameters": params, "versions": versions(),
                "seeds": {"init": f"numpy default_rng([seed, l, init]) for init in 0..{args.n_inits - 1}",
                          "split": "sklearn train_test_split(random_state=split_seed, stratify=y)"}}
    # written first: the chapter reads it (its stored-run section) during this very execution
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=dict(os.environ, MARKOVLIB_BATCH="1", OMP_NUM_THREADS="1"))
    manifest["wall_seconds"] = round(time.perf_counter() - t0)
    manifest["papermill_returncode"] = proc.returncode
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (out / "executed.ipynb").unlink(missing_ok=True)
    (out / "parameters.yaml").unlink(missing_ok=True)
    print(f"wrote {out / 'results.csv'} and {out / 'manifest.json'} (papermill exit {proc.returncode})")
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
