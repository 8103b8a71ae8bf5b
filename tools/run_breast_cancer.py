"""The breast-cancer study (Fig. 4 of "Topological obstruction to the training of shallow ReLU neural
networks") at the paper's scale, run once; the rows are committed as data.

    python tools/run_breast_cancer.py          # writes book/data/breast_cancer/{results.csv, manifest.json}
    python tools/run_breast_cancer.py --scheduler tcp://host:8786   # on an existing dask cluster

It executes the chapter book/topo_breast_cancer.ipynb through papermill with 100 initializations per
(width, n_plus) cell and the chapter's protocol (below, passed explicitly and recorded in the manifest); the
chapter's training cell writes one row per run. The widths are split into parts of two (the chapter needs at least
two; the smallest with the largest, to even out the work), one papermill execution per part on dask.distributed
(markovlib.book.runner: a LocalCluster of ``--workers`` processes, or ``--scheduler``); the rows of every run depend
only on (seed, width, init), so the parts' rows, joined in the order of the widths, are the rows of one execution.
About 15 minutes of CPU (one BLAS thread per part).

A part whose chapter stops after its training cell wrote its rows (an assertion of the chapter's own analysis)
keeps its rows; its papermill exit status is recorded. A part without rows (or whose worker died more often than
``--allowed-failures``) is listed in the manifest's ``failed_parts``, and the tool exits with status 1.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from markovlib.book.provenance import ROOT, Provenance, versions
from markovlib.book.runner import add_cluster_arguments, run_grid

CHAPTER = ROOT / "book" / "topo_breast_cancer.ipynb"
PROTOCOL = {"seed": 0, "split_seed": 0, "test_size": 0.3, "widths": [2, 3, 4, 5, 6, 7, 8, 9], "c_abs": 1.0,
            "lr": 0.05, "steps": 1500, "n_inits": 100}


def parts(widths):
    """Pairs of widths, the smallest with the largest (the last part takes three when their number is odd)."""
    ws = sorted(widths)
    out = [[ws[i], ws[-1 - i]] for i in range(len(ws) // 2)]
    if len(ws) % 2:
        out[-1].append(ws[len(ws) // 2])
    return [sorted(p) for p in out]


def run_part(params, csv_path, work):
    """Execute the chapter for one part (a dask task); return (papermill exit status, its rows, stderr tail)."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    yaml = work / f"{Path(csv_path).stem}.yaml"
    yaml.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in params.items()))
    Path(csv_path).unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "papermill", str(CHAPTER), str(work / f"{Path(csv_path).stem}.ipynb"),
           "--cwd", str(ROOT), "--no-progress-bar", "--log-level", "WARNING", "-p", "results_csv", str(csv_path),
           "-f", str(yaml)]
    env = dict(os.environ, MARKOVLIB_BATCH="1", OMP_NUM_THREADS="1")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    rows = []
    if Path(csv_path).is_file():
        with open(csv_path) as fh:
            rows = list(csv.DictReader(fh))
    return done.returncode, rows, done.stderr.strip()[-300:]


def main(argv=None) -> int:
    ap = add_cluster_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--n-inits", type=int, default=PROTOCOL["n_inits"], help="initializations per cell")
    ap.add_argument("--widths", type=int, nargs="+", default=PROTOCOL["widths"], help="hidden widths (>= 2 of them)")
    ap.add_argument("--out", default=str(ROOT / "book" / "data" / "breast_cancer"), help="output folder")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "markovlib_breast_cancer"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prov = Provenance(out, None if argv is None else ["tools/run_breast_cancer.py", *argv])
    params = dict(PROTOCOL, n_inits=args.n_inits, widths=sorted(args.widths))
    split = parts(params["widths"])
    tasks = [(f"widths_{'_'.join(map(str, ws))}", (dict(params, widths=ws), str(Path(args.work) / f"part{i}.csv"),
                                                     args.work)) for i, ws in enumerate(split)]
    outcomes = run_grid(run_part, tasks, args)
    rows, codes, failed = [], {}, []
    for (key, _), o in zip(tasks, outcomes):
        if o.status != "ok" or not o.value[1]:
            failed.append([key, o.error if o.status != "ok" else f"no rows; papermill: {o.value[2]}"])
            continue
        codes[key] = o.value[0]
        rows += o.value[1]
    rows.sort(key=lambda r: (int(r["width"]), int(r["n_plus"]), int(r["init"])))
    if rows:
        with open(out / "results.csv", "w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    papermill = ("python -m papermill book/topo_breast_cancer.ipynb PART.ipynb --cwd ROOT --no-progress-bar "
                 "--log-level WARNING -p results_csv PART.csv -f PART.yaml (PART.yaml: the parameters below, with "
                 "the part's widths)")
    manifest = {"description": __doc__, "command": prov.command, "papermill": papermill, "parts": split,
                "parameters": params, "versions": versions(),
                "seeds": {"init": f"numpy default_rng([seed, l, init]) for init in 0..{args.n_inits - 1}",
                          "split": "sklearn train_test_split(random_state=split_seed, stratify=y)"},
                "papermill_returncodes": codes, "failed_parts": failed,
                "provenance": prov.block({"seed": params["seed"], "split_seed": params["split_seed"]},
                                         ["results.csv"] if rows else [])}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {out / 'results.csv'} and {out / 'manifest.json'}: {len(rows)} rows; papermill exit statuses "
          f"{codes}; {len(failed)} parts failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
