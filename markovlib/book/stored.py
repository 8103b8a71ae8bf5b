"""Reading the stored paper-scale sets of ``book/data`` in a chapter: the checksums of a set's manifest, and the
deterministic prefix of its runs as ``tools/run_slice_prefix.py`` measured it.

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
