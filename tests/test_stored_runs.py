"""markovlib.transformer.stored_runs: per-seed frames, outcomes, counts, the slice cap and a replay."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from markovlib.markov.chain import MarkovChain
from markovlib.transformer import stored_runs
from markovlib.transformer.config import recipe
from markovlib.transformer.training import Trainer

torch.set_num_threads(1)
P, Q = 0.5, 0.8
CH = MarkovChain(P, Q)


def _frame():
    """Two seeds of one init: seed 0 drops from log 2 to H(pi) and then to the entropy rate; seed 1 stays at H(pi)."""
    rows = []
    for seed, path in ((0, [math.log(2), CH.marginal_entropy, CH.entropy_rate]),
                       (1, [math.log(2), CH.marginal_entropy, CH.marginal_entropy])):
        for step, loss in zip((0, 100, 200), path):
            rows.append(dict(p=P, q=Q, init="standard", seed=seed, step=step, eval_loss=loss,
                             context_coefficient=0.1 * step, train_loss=np.nan))
    return pd.DataFrame(rows)


def test_runs_per_seed_and_final_value():
    runs = stored_runs.runs_per_seed(_frame(), P, Q, "standard")
    assert [int(g.seed.iloc[0]) for g in runs] == [0, 1]
    assert stored_runs.final_value(runs[0], "context_coefficient") == pytest.approx(20.0)
    with pytest.raises(ValueError, match="column"):
        stored_runs.final_value(runs[0], "nope")
    with pytest.raises(ValueError, match="no recorded value"):
        stored_runs.final_value(runs[0], "train_loss")


def test_outcome_rows():
    ch, rows = stored_runs.outcome_rows(_frame(), P, Q, ["standard"], 0.02)
    r = rows["standard"]
    assert ch.p == P and r["start"] == pytest.approx(math.log(2))
    assert r["leaves"][0] == 200 and math.isnan(r["leaves"][1])
    assert r["bigram"][0] == 200 and math.isnan(r["bigram"][1])
    with pytest.raises(ValueError, match="at_tol"):
        stored_runs.outcome_rows(_frame(), P, Q, ["standard"], 0.0)


def test_count_text():
    assert stored_runs.count_text([True, True, False, True]).startswith("3/4 [")
    with pytest.raises(ValueError, match="flags"):
        stored_runs.count_text([])


def test_slice_cap_and_coverage():
    stored = _frame()
    prefix = pd.DataFrame([dict(config=c, p=P, q=Q, init="standard", seed=s, step=k,
                                abs_diff=1e-9 if k < 30 + s else 1.0)
                           for c in ("a", "b") for s in (0, 1) for k in range(1, 60)])
    prefix_of, cap = stored_runs.slice_cap(prefix, stored, 1e-6)
    assert int(prefix_of.min()) == 29 and cap == 14
    with pytest.raises(ValueError, match="does not cover every stored run"):
        stored_runs.slice_cap(prefix[prefix.seed == 0], stored, 1e-6)


def test_replay_error_reproduces_a_run_and_catches_a_changed_learning_rate():
    knobs = recipe("authors_fig4", steps=20, length=16, batch=2)
    tr = Trainer(p=P, q=Q, init="standard", seed=0, eval_every=0, device="cpu", progress=False, **knobs)
    for _ in range(5):
        tr.train_step()
    stored = pd.DataFrame([dict(p=P, q=Q, init="standard", seed=0, step=r["step"], train_loss=r["train_loss"])
                           for r in tr.history])
    specs = {"standard": {"model": "binary", "init": "standard"}}
    over = dict(steps=20, length=16, batch=2)
    worst, n = stored_runs.replay_error(stored, specs, [(P, Q)], 0, 5, overrides=over)
    assert n == 1 and worst == 0.0
    worst_lr, _ = stored_runs.replay_error(stored, specs, [(P, Q)], 0, 5, overrides=over, lr_factor=1.5)
    assert worst_lr > 0
    with pytest.raises(ValueError, match="steps"):
        stored_runs.replay_error(stored, specs, [(P, Q)], 0, 0)
