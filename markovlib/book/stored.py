"""Reading the stored paper-scale sets of ``book/data`` in a chapter: the checksums of a set's manifest, a set
stored in parts (more seeds run later, each part with its own manifest), and the deterministic prefix of its runs as
``tools/run_slice_prefix.py`` measured it.

A chapter that re-executes a slice of stored runs may only compare the steps over which a re-run reproduces the
stored curve to rounding; :func:`deterministic_prefix` reads that from the stored per-step differences, so every
chapter caps its slice by the same rule.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np


def verify_checksums(folder, manifest: str = "manifest.json") -> dict:
    """Check every data file that ``folder/manifest`` lists under ``provenance.files`` against its sha256; return
    the manifest. Raises ValueError naming the first file that differs (the stored set is then not the one the
    manifest describes)."""
    folder = Path(folder)
    man = json.loads((folder / manifest).read_text())
    for name, meta in man["provenance"]["files"].items():
        if hashlib.sha256((folder / name).read_bytes()).hexdigest() != meta["sha256"]:
            raise ValueError(f"{folder / name} does not match the sha256 of its manifest")
    return man


# the sets of book/data stored in parts: their manifests, in the order the parts were made
PARTS = {"fig4": ("manifest.json", "manifest_seeds5_19.json"),
         "lowrank": ("manifest.json", "manifest_seeds3_9.json", "manifest_seeds10_19.json"),
         "lowrank_perturbed": ("manifest_perturbed.json", "manifest_perturbed10_19.json")}


def read_parts(folder, manifests, same=(), file=None):
    """A stored set made in parts by separate runs of its tool (``tools/run_fig4.py --seeds 5-19 --tag ...``): for
    each manifest name in ``manifests``, its checksums verified (:func:`verify_checksums`) and its data file read
    (its one file, or with ``file`` the one whose name starts with ``file``). The parts must hold disjoint seeds, each exactly the seeds its manifest lists, and agree on the manifest
    keys ``same`` (the settings: chains, initializations, ...). Returns (the rows of every part, one frame; the
    manifests in order). Raises ValueError naming the part that breaks a rule."""
    import pandas as pd

    folder = Path(folder)
    frames, mans, seen = [], [], set()
    for name in manifests:
        man = verify_checksums(folder, name)
        files = [f for f in man["provenance"]["files"] if file is None or f.startswith(file)]
        if len(files) != 1:
            raise ValueError(f"{folder / name}: no single data file{'' if file is None else ' ' + file}: {files}")
        frame = pd.read_csv(folder / files[0])
        seeds = set(int(s) for s in frame.seed.unique())
        if seeds != set(man["seeds"]):
            raise ValueError(f"{folder / files[0]}: holds seeds {sorted(seeds)}, its manifest lists {man['seeds']}")
        if seeds & seen:
            raise ValueError(f"{folder / name}: seeds {sorted(seeds & seen)} are in an earlier part too")
        for key in same:
            if mans and man.get(key) != mans[0].get(key):
                raise ValueError(f"{folder / name}: its {key!r} differs from the first part's")
        seen |= seeds
        frames.append(frame)
        mans.append(man)
    if not frames:
        raise ValueError("manifests must name at least one part")
    return pd.concat(frames, ignore_index=True), mans


def deterministic_prefix(frame, by, diff, level: float):
    """Per stored run (the groups of ``frame`` by the columns ``by``): the last step up to which every difference
    in the columns ``diff`` (one name or a list) stays at most ``level``, from the first compared step on; the step
    before the first compared one when even that one is over. ``frame`` has a ``step`` column (the rows of
    ``slice_prefix.csv``); a group may hold several rows per step (one per numeric configuration, when ``by`` leaves
    out ``config``): a step is within the level only when every one of its rows is. Returns a pandas Series indexed
    by ``by``."""
    diff = [diff] if isinstance(diff, str) else list(diff)
    level = float(level)
    if not level > 0:
        raise ValueError(f"level must be a real number > 0, got {level!r}")

    def last_within(g):
        g = g.groupby("step")[diff].max().sort_index()  # the worst row of each step, steps in order
        steps = g.index.to_numpy()
        within = np.logical_and.accumulate((g.to_numpy() <= level).all(axis=1))
        return int(steps[within].max()) if within.any() else int(steps[0]) - 1

    return frame.groupby(list(by)).apply(last_within, include_groups=False)


def data_dir(name: str) -> Path:
    """The folder ``book/data/<name>`` of a stored set, wherever the chapter runs: from ``book/`` (nbval, Jupyter),
    from the repository root (papermill, the tools), or elsewhere with the package installed from the checkout.
    Raises ValueError naming the sets that exist when ``name`` is none of them."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be the name of a folder of book/data, got {name!r}")
    candidates = [Path("data") / name, Path("book") / "data" / name,
                  Path(__file__).resolve().parents[2] / "book" / "data" / name]
    for folder in candidates:
        if folder.is_dir():
            return folder
    root = next((c.parent for c in candidates if c.parent.is_dir()), None)
    known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root else []
    raise ValueError(f"name must be one of the stored sets {known}, got {name!r}")
