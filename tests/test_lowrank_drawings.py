"""markovlib.transformer.lowrank_drawings: every figure drawn headlessly, with its panels and curves."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from markovlib.transformer import lowrank_drawings as ld  # noqa: E402

STEPS = np.arange(0, 100, 20)
TRACK = {"step": STEPS, **{m: np.linspace(0.2, 1.0, STEPS.size) for m in ld.MATRICES},
         **{m + "/s2s1": np.linspace(1.0, 0.01, STEPS.size) for m in ld.MATRICES}}
CURVES = pd.DataFrame([{"init": "standard", "optimizer": "adamw", "seed": s, "step": int(k),
                        **{f"top_fraction_{m}": 0.9 for m in ld.MATRICES}} for s in (0, 1) for k in STEPS])


def test_fraction_figure_and_stored_track():
    track = ld.stored_track(CURVES, "standard", "adamw", 1)
    assert list(track["step"]) == list(STEPS) and track["W_1"][0] == 0.9
    fig = ld.fraction_figure([(TRACK, "a"), (track, "b")], 0.99, "t")
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 8
    plt.close(fig)
    with pytest.raises(ValueError, match="no stored curve"):
        ld.stored_track(CURVES, "standard", "sgd_5", 0)
    with pytest.raises(ValueError, match="panels"):
        ld.fraction_figure([], 0.99, "t")


def test_other_figures():
    fig = ld.embedding_figure([("SGD", np.array([1.0, -0.5])), ("AdamW", np.array([1.0, -1.0]))], 0)
    assert len(fig.axes[0].patches) == 4
    plt.close(fig)
    runs = [{"track": TRACK}] * 3
    fig = ld.s2s1_figure([("SGD", runs), ("AdamW", runs)], {m: [3, 2, 1] for m in ld.FOUR}, [0.9, 0.99, 0.999], 128)
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) == 12 and len(fig.axes[2].lines) == 4
    plt.close(fig)
    fr = {m: np.array([0.5, 0.99]) for m in ld.MATRICES}
    fig = ld.seeds_figure([("a", fr), ("b", fr)], 0.99, [("claim one", 2, 2), ("claim two", 1, 2)], 0.5)
    assert len(fig.axes) == 2 and len(fig.axes[1].get_yticklabels()) == 2
    plt.close(fig)
    fig = ld.stable_rank_figure([(CURVES, "x"), (CURVES, "y")], ld.MATRICES)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 14
    plt.close(fig)
    with pytest.raises(ValueError, match="embeddings"):
        ld.embedding_figure([], 0)
