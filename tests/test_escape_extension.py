"""markovlib.transformer.escape_extension on a synthetic extension (hand-computed frozen-drift w and E)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from markovlib.markov.energy import energy
from markovlib.transformer.escape_extension import agreement_with_stored, extension_vs_law
from markovlib.transformer.escape_long import LongSet


def _ext():
    steps = np.arange(0, 5001, 1000)
    rows = [{"seed": s, "step": int(t), "w": -0.01 - 1e-6 * t * (s + 1), "energy": float(energy(0.0, -0.01 - 1e-6 * t)),
             "eval_loss": 0.6663, "coefficient_ratio": 0.0} for s in (0, 2) for t in steps]
    return LongSet({"chains": [[0.5, 0.8]]}, pd.DataFrame(), pd.DataFrame(rows), 5000, 16, [4.0])


def test_frozen_drift_w_and_e_at_the_horizon():
    law = pd.DataFrame({"p": 0.5, "q": 0.8, "optimizer": "sgd", "lr": 4.0, "seed": [0, 2],
                        "w_late": [-0.011, -0.013], "dw_law": [-1e-6, -2e-6]})
    out = extension_vs_law(_ext(), law, late=1000)
    assert out.loc[0, "w_law"] == pytest.approx(-0.011 - 1e-6 * 4000)
    assert out.loc[2, "E_law"] == pytest.approx(float(energy(0.0, -0.013 - 2e-6 * 4000)))
    assert out.loc[2, "w"] == pytest.approx(-0.01 - 1e-6 * 5000 * 3) and out.loc[0, "T"] == 5000
    assert out.loc[0, "end"] == "" and not out.loc[0, "E_above_saddle"]
    assert out.loc[0, "ratio_dw"] == pytest.approx((-1e-6 * 4000) / (-0.01 - 1e-6 * 5000 + 0.011))
    with pytest.raises(ValueError, match="no stored law row"):
        extension_vs_law(_ext(), law[law.seed == 0], late=1000)


def test_agreement_with_stored_reads_the_shared_evaluations():
    stored = pd.DataFrame({"p": 0.5, "q": 0.8, "optimizer": "sgd", "lr": 4.0, "seed": [0, 0, 2],
                           "step": [0, 1000, 1000], "w": [-0.01, -0.0110, -0.0130]})
    assert agreement_with_stored(_ext(), stored) == pytest.approx(abs(-0.01 - 3e-3 + 0.013))
    with pytest.raises(ValueError, match="shares no evaluation"):
        agreement_with_stored(_ext(), stored.assign(step=[7, 7, 7]))
