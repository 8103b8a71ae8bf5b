"""markovlib.transformer.lowrank and .drawings: run settings, alignment, flatness, stored counts, slice prefix."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from markovlib.transformer import drawings as transformer_drawings  # noqa: E402
from markovlib.transformer import lowrank  # noqa: E402


def test_run_config():
    cfg = lowrank.run_config(3, "standard", "sgd", 5.0, p=0.2, q=0.3, d=8, length=16, batch=4, steps=10,
                             init_std=1e-3)
    assert cfg["weight_decay"] == 0.0 and cfg["seed"] == 3 and cfg["grad_clip"] == 0.0
    assert lowrank.run_config(3, "standard", "adamw", 2e-3, p=0.2, q=0.3, d=8, length=16, batch=4, steps=10,
                              init_std=1e-3)["weight_decay"] == 1e-3
    with pytest.raises(ValueError, match="optimizer"):
        lowrank.run_config(3, "standard", "adam", 1.0, p=0.2, q=0.3, d=8, length=16, batch=4, steps=10, init_std=1)


def _canonical(d=4, r=16, seed=0):
    rng = np.random.default_rng(seed)
    alpha = rng.choice([-1.0, 1.0], size=d) / np.sqrt(d)
    u = rng.random(r) + 0.5
    return {"embedding": 0.7 * alpha, "W_V": 0.3 * np.outer(alpha, alpha), "W_O": -0.2 * np.outer(alpha, alpha),
            "W_1": np.outer(u, alpha), "W_2": -np.outer(alpha, u), "positional": np.outer(np.arange(1.0, 6.0), alpha)}


def test_alignment_and_flatness_on_the_canonical_form():
    W = _canonical()
    assert lowrank.min_alignment(W) == pytest.approx(1.0, abs=1e-12)
    assert lowrank.flatness(W["embedding"]) == pytest.approx(1.0)
    W["W_1"] = W["W_1"] + 0.5 * np.random.default_rng(1).normal(size=W["W_1"].shape)
    assert lowrank.min_alignment(W) < 0.999
    assert np.isnan(lowrank.top_vector(np.full((3, 3), np.nan), "left")).all()
    with pytest.raises(ValueError, match="weights must hold"):
        lowrank.min_alignment({"embedding": np.ones(4)})
    with pytest.raises(ValueError, match="e must be"):
        lowrank.flatness(np.zeros(3))
    assert np.isnan(lowrank.flatness(np.array([1.0, np.nan, 2.0])))  # a diverged run fails its claims
    with pytest.raises(ValueError, match="side"):
        lowrank.top_vector(np.eye(2), "up")


def test_stored_counts():
    final = pd.DataFrame({"init": ["standard"] * 4, "optimizer": ["sgd_5"] * 4, "seed": [0, 1, 10, 11],
                          "flatness": [0.95, 0.2, 0.99, 0.3]})
    k, n = lowrank.seeds_where(final, "standard", "sgd_5", lambda r: r["flatness"] > 0.9)
    assert (k, n) == (2, 4)
    assert lowrank.count_text(k, n, 1.96).startswith("2/4 seeds [")
    assert lowrank.later_count(final, "standard", "sgd_5", lambda r: r["flatness"] > 0.9).startswith("1/2")


def test_slice_prefix_coverage():
    rows = [dict(config=c, init="standard", optimizer="sgd_5", seed=s, step=k, loss_diff=1e-9,
                 fraction_diff=1e-9 if k <= 40 else 1.0) for c in ("a", "b") for s in (0, 1) for k in (20, 40, 60)]
    prefix_of, frame = lowrank.slice_prefix(pd.DataFrame(rows), [0, 1], 1e-6)
    assert int(prefix_of.min()) == 40 and "diff" in frame
    with pytest.raises(ValueError, match="does not cover"):
        lowrank.slice_prefix(pd.DataFrame(rows), [0, 1, 2], 1e-6)


def test_drawings_headless():
    steps = np.arange(0, 100, 20)
    track = {"step": steps, **{m: np.linspace(0.2, 1.0, steps.size) for m in transformer_drawings.FRACTION_MATRICES}}
    fig, ax = plt.subplots()
    transformer_drawings.fraction_panel(ax, track, "t", 0.99)
    assert len(ax.lines) == 8
    plt.close(fig)
    with pytest.raises(ValueError, match="track must hold"):
        transformer_drawings.fraction_panel(ax, {"step": steps}, "t", 0.99)
    W = _canonical()
    snaps = {s: W for s in (0, 50, 100)}
    fig = transformer_drawings.weight_heatmaps(snaps, [0, 50, 100], 100, "t")
    assert len(fig.axes) == 8
    plt.close(fig)


def test_replay_error_reproduces_a_short_run():
    from markovlib.transformer.config import recipe
    from markovlib.transformer.training import Trainer

    manifest = {"chain": [0.2, 0.3], "optimizers": {"sgd_5": {"lr": 5.0, "length": 16, "batch": 2, "steps": 40}}}
    knobs = recipe("sec51_sgd", **manifest["optimizers"]["sgd_5"], seed=0, eval_every=20, eval_batches=2)
    tr = Trainer(device="cpu", p=0.2, q=0.3, init="standard", progress=False, **knobs)
    tr.train(stop_at=20)
    rows = [dict(r, init="standard", optimizer="sgd_5", seed=0) for r in tr.history if "eval_loss" in r]
    curves = pd.DataFrame(rows)
    assert lowrank.replay_error(curves, manifest, ["standard"], 0, 20, ["W_1"]) == 0.0
    assert lowrank.replay_error(curves, manifest, ["standard"], 0, 20, ["W_1"], lr_factor=1.01) > 0
