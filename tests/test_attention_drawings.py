"""markovlib.markov.attention_drawings: the attention chapter's figures, drawn headlessly, with what they count."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.markov import attention_basins, attention_drawings  # noqa: E402

T_EFF = 4000.0


def test_gradient_lines_and_surfaces():
    fig = attention_drawings.gradient_lines(n=21)
    assert len(fig.axes) == 2 and fig.axes[0].get_xlabel() == "e (embedding)"  # the plot and its colorbar
    assert len(attention_drawings.basin_surfaces(n=9).axes) == 2
    plt.close("all")
    with pytest.raises(ValueError, match="lim"):
        attention_drawings.gradient_lines(lim=0.0)


def test_basin_slices_count_no_disagreement():
    fig, bad = attention_drawings.basin_slices([(0.9, 0.9), (0.1, 0.1)], [0.0], 4, T_EFF, 3000)
    assert bad == 0 and len(fig.axes) == 2
    plt.close(fig)


def test_flow_figure_counts_every_flow():
    fig, counts = attention_drawings.flow_figure([(0.9, 0.9)], 0.15, (0.6, 0.6, 0.6), 3, T_EFF,
                                                 np.random.default_rng(4), "test")
    assert len(counts) == 1 and sum(counts[0].values()) == 3
    assert counts[0]["unigram"] == 3  # near the origin, p + q > 1: the plane e = 0 attracts
    plt.close(fig)


def test_escape_and_thm11_figures():
    esc = attention_basins.separatrix_escape(0.9, 0.9, T_EFF)
    fig = attention_drawings.escape_figure(esc, 0.9, 0.9)
    assert len(fig.axes[0].lines) == 2 * len(esc.flows)
    mc = attention_basins.thm11_monte_carlo([(0.9, 0.9), (0.1, 0.1)], [0.1], 20, 200, 0.001, 3.0, T_EFF, 3000,
                                            np.random.default_rng(5))
    fig = attention_drawings.thm11_figure(mc, [(0.9, 0.9), (0.1, 0.1)], np.random.default_rng(7))
    assert len(fig.axes[0].lines) >= 2  # the two rule curves
    plt.close("all")


def test_static_explorer_frames_end_as_predicted():
    grid = {"p": [0.9], "q": [0.9], "e0": [1.0], "w0": [-1.0], "a0": [0.0]}
    static, agree, n = attention_drawings.static_explorer(grid, initial={"p": 0.9, "q": 0.9, "e0": 1.0, "w0": -1.0,
                                                                         "a0": 0.0})
    assert (agree, n) == (1, 1) and len(static.results) == 1 and static.results[0]["reached"] == "global_min"
