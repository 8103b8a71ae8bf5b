"""markovlib.transformer.guideline: the step at the bigram predictor, the stored set, its prefix and a replay."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from markovlib.book.stored import data_dir
from markovlib.transformer import guideline

torch.set_num_threads(1)
SETTINGS = dict(length=64, batch=16, init_std=0.02, lr=2e-3, sgd_lr=1.0, within=(0.1, 0.9))


def test_first_above():
    x = np.array([0, 10, 20, 30, 40])
    assert guideline.first_above(x, [0.1, 0.7, 0.2, 0.8, 0.9], 0.5) == 30
    assert guideline.first_above(x, [0.6, 0.7, 0.8, 0.8, 0.9], 0.5) == 0
    assert math.isinf(guideline.first_above(x, [0.6, 0.7, 0.8, 0.8, 0.1], 0.5))
    with pytest.raises(ValueError, match="same length"):
        guideline.first_above(x, [0.1], 0.5)


def test_steps_to_bigram_of_a_run():
    run = {"history": [{"step": 1, "train_loss": 0.7}, {"step": 0, "eval_loss": 0.7, "coefficient_ratio": 0.0},
                       {"step": 10, "eval_loss": 0.6, "coefficient_ratio": 0.9}]}
    x, r = guideline.ratio_curve(run)
    assert list(x) == [0, 10] and list(r) == [0.0, 0.9]
    assert guideline.steps_to_bigram(run, 0.5) == 10


def test_load_stored_checks_the_settings():
    stored = guideline.load_stored(data_dir("guideline"), n_seeds=20, **SETTINGS)
    assert len(stored["seeds"]) == 20 and stored["plateau"][0] + stored["plateau"][1] > 1
    with pytest.raises(ValueError, match="length 128"):
        guideline.load_stored(data_dir("guideline"), n_seeds=20, **dict(SETTINGS, length=128))


def test_check_slice_prefix():
    rows = [dict(config=c, seed=s, step=k, ratio_diff=1e-9 * k, loss_diff=0.0)
            for c in ("a", "b") for s in (0, 1) for k in range(1, 101)]
    assert guideline.check_slice_prefix(pd.DataFrame(rows), [0, 1], 100) == pytest.approx(1e-7)
    with pytest.raises(ValueError, match="prefix must cover"):
        guideline.check_slice_prefix(pd.DataFrame(rows), [0, 1, 2], 100)


def test_replay_error_reproduces_the_stored_prefix():
    stored = guideline.load_stored(data_dir("guideline"), n_seeds=20, **SETTINGS)
    key = ("grid", 0.5, 0.8, "standard", "adamw")
    worst, n = guideline.replay_error(stored, [key], 0, 100)
    assert n >= 2 and worst < 1e-5
    worst_lr, _ = guideline.replay_error(stored, [key], 0, 100, lr_factor=1.5)
    assert worst_lr > worst
