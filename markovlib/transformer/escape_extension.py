"""The stored SGD arm extended (trap_or_plateau, check X1 of book/_drafts/sgd_drift_law.md): plain SGD at lr 4,
batch 16 on the paper's chain (0.5, 0.8), the ten seeds with w_0 < 0, run ten times the stored horizon by the
seed-batched runner (``book/data/escape_long``, tag ``extend``), against the drift law frozen at the stored runs'
step ``late`` (``book/data/sgd_drift/runs.csv``: w there and the law's dw per step) and against the stored runs
themselves over their horizon.

The law's frozen drift puts w at w_late + dw (T - late) at step T and E at E(0, w) (Lemma 1 on the unigram line, e at
its floor); the measured projection and E are the set's evaluations.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..markov.energy import SADDLE_ENERGY, energy
from .escape_long import LongSet, growth, plateau_end

__all__ = ["extension_vs_law", "agreement_with_stored"]


def extension_vs_law(S: LongSet, law_runs: pd.DataFrame, late: int, lr=4.0) -> pd.DataFrame:
    """One row per seed of the extension: w and E measured at the horizon T, the law's frozen-drift w and E there,
    the ratio law / measured of the drift of w from ``late`` to T (the stored comparison's ratio over ten times its
    window)
    (from the stored run of the same seed: ``law_runs`` rows of plain SGD at ``lr`` on (0.5, 0.8), whose law was
    evaluated at step ``late``), whether E passed
    E_sad, the end of the plateau (kind and step, :func:`~markovlib.transformer.escape_long.plateau_end`) and the
    doubling time of |w| (:func:`~markovlib.transformer.escape_long.growth`)."""
    arm = law_runs[(law_runs.optimizer == "sgd") & np.isclose(law_runs.lr, lr) & np.isclose(law_runs.p, 0.5)
                   & np.isclose(law_runs.q, 0.8)].set_index("seed")
    ends = plateau_end(S)
    grow = growth(S, ends=ends)
    rows = []
    for seed, g in S.curves.sort_values("step").groupby("seed"):
        if seed not in arm.index:
            raise ValueError(f"seed {seed} of the extension has no stored law row at lr {lr}")
        T = int(g.step.iloc[-1])
        w_law = float(arm.loc[seed, "w_late"] + arm.loc[seed, "dw_law"] * (T - late))
        w_late = float(arm.loc[seed, "w_late"])
        rows.append({"seed": int(seed), "T": T, "w": float(g.w.iloc[-1]), "w_law": w_law,
                     "ratio_dw": (w_law - w_late) / (float(g.w.iloc[-1]) - w_late),
                     "E": float(g.energy.iloc[-1]), "E_law": float(energy(0.0, w_law)),
                     "E_above_saddle": bool(g.energy.iloc[-1] >= SADDLE_ENERGY),
                     "end": ends.loc[seed, "kind"], "T_end": ends.loc[seed, "T_end"],
                     "doubling": grow.loc[seed, "doubling"]})
    return pd.DataFrame(rows).set_index("seed")


def agreement_with_stored(S: LongSet, stored_curves: pd.DataFrame, lr=4.0) -> float:
    """The largest |w_extension - w_stored| over the evaluations the extension shares with the stored runs of the same
    seeds (plain SGD at ``lr`` on (0.5, 0.8), ``stored_curves`` of book/data/escape): the two runners' agreement over
    the stored horizon (the Trainer there, the seed-batched runner here; float32 sums in another order)."""
    ref = stored_curves[(stored_curves.optimizer == "sgd") & np.isclose(stored_curves.lr, lr)
                        & np.isclose(stored_curves.p, 0.5) & np.isclose(stored_curves.q, 0.8)]
    merged = S.curves.merge(ref[["seed", "step", "w"]], on=["seed", "step"], suffixes=("", "_stored"))
    if merged.empty:
        raise ValueError("the extension shares no evaluation with the stored runs")
    return float(np.abs(merged.w - merged.w_stored).max())
