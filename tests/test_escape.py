"""markovlib.transformer.escape: the trap-or-plateau runs (book/trap_or_plateau.ipynb, tools/run_escape.py)."""
import math

import numpy as np
import pytest

from markovlib.transformer.escape import OPTIMIZER_ARMS, escape_config, escape_step, train_with_energy
from markovlib.transformer.readout import canonical_scalars
from markovlib.transformer.training import Trainer


def test_escape_step():
    assert escape_step([0, 50, 100, 150], [0.0, 0.2, 0.5, 0.9]) == 100
    assert escape_step([0, 50], [0.1, 0.49]) is None
    assert escape_step([0, 50], [0.1, 0.49], threshold=0.4) == 50
    with pytest.raises(ValueError, match="threshold"):
        escape_step([0], [0.1], threshold=0)
    with pytest.raises(ValueError, match="steps and ratios"):
        escape_step([0, 1], [0.1])


def test_config_arms_and_validation():
    assert set(OPTIMIZER_ARMS) == {"sgd", "momentum", "adam", "adamw"}
    c = escape_config(0.75, 0.75, "momentum", 0.1, 3, 100)
    assert (c["optimizer"], c["momentum"], c["weight_decay"], c["schedule"], c["warmup"]) == ("sgd", 0.9, 0.0,
                                                                                               "constant", 0.0)
    assert escape_config(0.5, 0.8, "adam", 1e-3, 0, 10)["weight_decay"] == 0.0
    with pytest.raises(ValueError, match="optimizer"):
        escape_config(0.5, 0.8, "rmsprop", 1e-3, 0, 10)
    with pytest.raises(ValueError, match="p"):
        Trainer(**escape_config(1.5, 0.8, "adam", 1e-3, 0, 10), progress=False)


def test_train_with_energy_records_the_projection():
    cfg = escape_config(0.75, 0.75, "adam", 2e-3, 1, 20, eval_every=10)
    rows = train_with_energy(cfg)
    assert [r["step"] for r in rows] == [0, 10, 20]
    s0 = canonical_scalars(Trainer(**cfg, progress=False).model)  # the same seed gives the same initialization
    assert (rows[0]["e"], rows[0]["w"]) == (s0.e, s0.w)
    for r in rows:  # Lemma 1 written out (independent of markovlib.markov.energy)
        e, w = r["e"], r["w"]
        assert math.isclose(r["energy"], e * e - w * w - math.copysign(1, w) * math.log(abs(w)), rel_tol=1e-12)
        assert 0 < r["top_fraction_W_1"] <= 1 and np.isfinite(r["eval_loss"])
    assert rows == train_with_energy(cfg)  # deterministic
