"""Reading the stored K-state runs of ``book/beyond_two_states`` (``book/data/beyond_two_states``): the ladder
classification of a final loss, per-cell counts (never pooled) and the checks that a stored set is the one the
chapter describes.

A final loss x of a run on the symmetric chain (K, p) is classified against the ladder L_0 = log K > L_1 > ... >
L_{K-1} = the entropy rate of lumped predictors (``multistate.lumped_loss``, Prop. "beyond-prop-ladder"): it *ends
at H(pi)* when nearer L_0 than L_1, *reaches the entropy rate* when nearer L_{K-1} than L_{K-2}, sits on the
nearest level m, and the cell is *resolvable* when both spacings are at least ``resolution``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..numerics import checks
from .multistate import lumped_loss


def ladder(n_states, p) -> np.ndarray:
    """[L_0, ..., L_{K-1}] of the symmetric chain (K, p)."""
    K = checks.positive_int("n_states", n_states)
    return np.array([lumped_loss(K, p, m) for m in range(K)])


def ladder_class(n_states, p, x, resolution):
    """(at H(pi), at the entropy rate, nearest level m, resolvable) of a final loss ``x`` (module docstring)."""
    resolution = checks.positive_real("resolution", resolution)
    L = ladder(int(n_states), float(p))
    x = float(x)
    return (x > (L[0] + L[1]) / 2, x < (L[-2] + L[-1]) / 2, int(np.argmin(np.abs(L - x))),
            min(L[0] - L[1], L[-2] - L[-1]) >= resolution)


def classify_runs(runs, curves, resolution, back=100):
    """``runs`` with the columns at_unigram, at_bigram, level, resolvable (of ``final_loss``), fell (the drop of the
    run's stored held-out loss over its last ``back`` steps, from ``curves``) and side ("p < p*" when lam > 0)."""
    back = checks.positive_int("back", back)

    def one(row):
        h = curves[(curves.K == row.K) & np.isclose(curves.p, row.p) & (curves.init == row.init)
                   & (curves.seed == row.seed)].set_index("step").loss
        at_u, at_b, level, res = ladder_class(row.K, row.p, row.final_loss, resolution)
        return pd.Series({"at_unigram": at_u, "at_bigram": at_b, "level": level, "resolvable": res,
                          "fell": float(h[h.index.max() - back] - h[h.index.max()])})

    out = pd.concat([runs, runs.apply(one, axis=1)], axis=1)
    out["side"] = np.where(out.lam > 0, "p < p*", "p > p*")
    return out


def count_text(flags) -> str:
    """``"k/n [lo, hi]"``: how many of the booleans hold, with the 95 % Wilson interval."""
    flags = np.asarray(flags, dtype=bool)
    k, n = int(flags.sum()), len(flags)
    lo, hi = wilson_interval(k, n)
    return f"{fraction(k, n)} [{fixed(lo, 2)}, {fixed(hi, 2)}]"


def cells_text(runs, side, init, column="at_bigram", falling_tol=None) -> str:
    """The per-cell counts of one side and init over the resolvable cells, ``"k/n at K = .., p = .."`` joined by
    "; " (with ``falling_tol``: and how many runs were still falling by more than it)."""
    parts = []
    for (K, p), g in runs[(runs.side == side) & (runs.init == init) & runs.resolvable].groupby(["K", "p"]):
        text = f"{fraction(g[column].sum(), len(g))} at K = {K}, p = {p:g}"
        if falling_tol is not None:
            text += f" ({fraction((g.fell > falling_tol).sum(), len(g))} still falling)"
        parts.append(text)
    return "; ".join(parts)


def cells_counts(phase, arm, side, column, want=True, reachable=False):
    """[(K, p, k, n)] over the resolvable cells of one arm and side (``reachable``: only those with the column
    ``capacity`` true): k of the n seeds have ``column == want``, per cell (never pooled)."""
    sel = phase[(phase.arm == arm) & (phase.side == side) & phase.resolvable & (phase.capacity | (not reachable))]
    return [(int(K), float(p), int((g[column] == want).sum()), len(g)) for (K, p), g in sel.groupby(["K", "p"])]


def counts_text(rows) -> str:
    """:func:`cells_counts` rows as text, ``"k/n at K = .., p = .."`` joined by "; "."""
    return "; ".join(f"{fraction(k, n)} at K = {K}, p = {p:g}" for K, p, k, n in rows)


def stored_cell(runs, n_states, p, seed):
    """The stored runs of the cell (K, p), after checking that it and the ``seed`` are stored (ValueError naming the
    stored K, p and seeds otherwise)."""
    cell = runs[(runs.K == n_states) & np.isclose(runs.p, p)]
    if cell.empty or seed not in set(cell.seed):
        raise ValueError(f"(slice_K, slice_p, slice_seed) = {(n_states, p, seed)} is not a stored cell and seed; "
                         f"stored K {sorted(set(runs.K))}, p {sorted(set(runs.p))}, seeds {sorted(set(runs.seed))}")
    return cell


def check_phase_set(manifest, phase, arms):
    """ValueError unless the phase set is complete (every planned run stored, none failed) and its arms (optimizer,
    tied, init) are exactly ``arms``."""
    if not (manifest["provenance"]["complete"] and len(phase) == manifest["runs_planned"]
            and not manifest["failed_runs"]):
        raise ValueError(f"the phase set is incomplete: {len(phase)} of {manifest['runs_planned']} runs")
    stored = {(a["optimizer"], int(a["tied"]), a["init"]) for a in manifest["arms"]}
    if stored != set(arms):
        raise ValueError(f"the stored arms {sorted(stored)} are not the chapter's {sorted(arms)}")


def stored_facts(folder) -> dict:
    """What the chapter's parameters are checked against, from the manifests of the stored set in ``folder``:
    "grid" (K -> stored p), "seeds" and "steps" of the 500-step grid, "lags" of the lag set, "phase_steps" and
    "phase_eval_every" of the phase set, and "prefix_seeds", "prefix_steps" of its measured re-execution prefix."""
    import json
    from pathlib import Path

    folder = Path(folder)
    grid = json.loads((folder / "manifest.json").read_text())
    phase = json.loads((folder / "manifest_phase.json").read_text())
    prefix = pd.read_csv(folder / "slice_prefix.csv")
    return {"grid": {int(K): [float(p) for p in ps] for K, ps in grid["grid"].items()},
            "seeds": [int(s) for s in grid["seeds"]], "steps": int(grid["settings"]["steps"]),
            "lags": [int(k) for k in json.loads((folder / "manifest_lag.json").read_text())["lags"]],
            "phase_steps": int(phase["settings"]["steps"]), "phase_eval_every": int(phase["settings"]["eval_every"]),
            "prefix_seeds": sorted(int(s) for s in set(prefix.seed)), "prefix_steps": int(prefix.step.max())}


def is_stored_cell(facts, n_states, p, seed) -> bool:
    """Whether (K, p) is a cell of the stored grid of ``facts`` (:func:`stored_facts`) and ``seed`` a stored seed."""
    return (any(abs(float(p) - x) < 1e-9 for x in facts["grid"].get(int(n_states), []))
            and int(seed) in facts["seeds"])
