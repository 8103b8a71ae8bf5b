"""Execute every chapter of the book at its second parameter set, through papermill's own interface.

    python tools/run_ci_params.py [--workers 2] [--out _build/ci_params] [chapter.ipynb ...]

For each chapter ``book/<name>.ipynb`` listed in ``_toc.yml`` this runs, as a reader would,

    papermill book/<name>.ipynb <out>/<name>.ipynb -f book/ci_params/<name>.yaml

(other chains on both sides of p + q = 1, other seeds, reduced sizes; each chapter's text states the range in
which its claims hold). A chapter passes when no cell raises, i.e. no assertion fails; outputs are not compared
(they naturally differ from the committed ones). A chapter without a parameter file fails. Prints one line per
chapter with its status and wall time, and exits 1 if any chapter failed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_chapters() -> list[Path]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [ch["file"] for part in toc.get("parts", []) for ch in part.get("chapters", [])]
    return [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").is_file()]


def run_one(nb: Path, out_dir: Path) -> tuple[str, bool, float, str]:
    params = ROOT / "book" / "ci_params" / f"{nb.stem}.yaml"
    if not params.is_file():
        return nb.stem, False, 0.0, f"missing {params.relative_to(ROOT)}"
    env = dict(os.environ, MARKOVLIB_BATCH="1")
    cmd = [sys.executable, "-m", "papermill", str(nb), str(out_dir / nb.name), "-f", str(params),
           "--cwd", str(ROOT), "--no-progress-bar", "--log-level", "WARNING"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    return nb.stem, proc.returncode == 0, dt, tail


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chapters", nargs="*", help="chapter notebooks (default: every chapter in _toc.yml)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "_build" / "ci_params"))
    args = ap.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    chapters = [Path(c).resolve() for c in args.chapters] or toc_chapters()
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        results = list(pool.map(lambda nb: run_one(nb, out_dir), chapters))
    failed = 0
    for name, ok, dt, tail in results:
        print(f"{name:<28} {'ok' if ok else 'FAILED':<7} {dt:7.1f} s")
        if not ok:
            failed += 1
            print("    " + tail.replace("\n", "\n    "))
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
