"""markovlib.beyond.kstate_grid, kstate_phase, kstate_drawings: the stored K-state runs of beyond_two_states read,
classified, counted, re-executed and drawn, one call per step."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from markovlib.beyond import kstate_drawings, kstate_grid, kstate_phase, kstate_reference, multistate  # noqa: E402
from markovlib.book.stored import data_dir  # noqa: E402

DATA = data_dir("beyond_two_states")


@pytest.fixture(scope="module")
def grid():
    return kstate_grid.load_grid(DATA, 0.02)


@pytest.fixture(scope="module")
def loaded():
    return kstate_phase.load_phase(DATA, 0.02, 1000)


def test_one_thread_restores_the_count():
    before = torch.get_num_threads()
    with kstate_grid.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_load_grid_and_its_table(grid):
    runs = grid["runs"]
    assert len(runs) == grid["manifest"]["runs_planned"] and grid["col_err"] < 1e-12
    assert set(runs.side) == {"p < p*", "p > p*"} and runs.resolvable.any() and (~runs.resolvable).any()
    table = kstate_grid.grid_table(runs, 0.002)
    assert len(table) == runs.groupby(["K", "p", "init"]).ngroups
    row = table[(table.K == 3) & np.isclose(table.p, 0.1) & (table.init == "standard")].iloc[0]
    g = runs[(runs.K == 3) & np.isclose(runs.p, 0.1) & (runs.init == "standard")]
    assert row["reaches entropy rate [95% Wilson]"].startswith(f"{int(g.at_bigram.sum())}/{len(g)}")
    with pytest.raises(ValueError, match="folder"):
        kstate_grid.load_grid(DATA / "nowhere", 0.02)


def test_grid_glues_and_note(grid):
    runs = grid["runs"]
    glues = kstate_grid.grid_glues(runs, 0.002)
    assert glues["wilson_5of5"] == "5/5 is 0.65"  # one-sided 95 % Wilson: 5 / (5 + 1.645^2) = 0.649
    assert glues["unresolved_cells"] != "none" and "K = 3, p = 0.1" in glues["std_persistent"]
    rel = kstate_grid.unresolved_near_unigram(runs)
    assert 0 < rel < 0.05 and f"{100 * rel:.1f} %" in kstate_grid.grid_note(runs, grid["manifest"])


@pytest.mark.slow  # re-executes or re-runs training
def test_replay_slice_matches_the_stored_prefix(grid):
    short = {**grid, "settings": {**grid["settings"], "steps": 100}}  # the live run stops at 100 steps
    out = kstate_grid.replay_slice(short, n_states=3, p=0.967, seed=0, prefix=50, falling_tol=10.0, tv_tol=0.5,
                                   readout_seed=77)
    assert out["prefix_dev"] < 2e-6 and len(out["read"]) == 2 and 0 <= out["tv_worst"] < 1
    assert out["lines"][-1].startswith("first 50 steps of 10 stored runs")
    with pytest.raises(ValueError, match="stored cell"):
        kstate_grid.replay_slice(grid, n_states=3, p=0.5, seed=0, prefix=50, falling_tol=0.002, tv_tol=0.05,
                                 readout_seed=77)


def test_lag_table():
    lag = kstate_grid.lag_table(DATA, 0.01)
    assert lag["best"][1] - lag["rate"] < 0.01 and lag["short"] > 0.1 and lag["higher"] == [k for k in lag["best"]
                                                                                             if k >= 2]
    assert len(lag["table"]) == len(lag["best"]) and lag["n_higher"] == int((lag["runs"].lag >= 2).sum())


def test_load_phase_classifies_every_run(loaded):
    phase = loaded["phase"]
    assert loaded["col_err"] < 1e-12 and set(phase.arm) == set(kstate_phase.ARMS.values())
    assert (phase.capacity == (phase.K - 1 <= 8)).all() and phase.fell.notna().all()
    K, p, x = phase.K.iloc[0], phase.p.iloc[0], phase.final_loss.iloc[0]
    L = multistate.lumped_loss(K, p, 0), multistate.lumped_loss(K, p, 1)
    assert bool(phase.at_unigram.iloc[0]) == (x > sum(L) / 2)
    table = kstate_phase.phase_table(phase, 0.002, 1000)
    assert len(table) == 5 * phase.groupby(["K", "p"]).ngroups


def test_by_cell_text_and_arm_counts():
    frame = pd.DataFrame({"K": [3, 3, 3], "p": [0.9, 0.9, 0.9], "arm": ["A", "A", "B"], "hit": [True, False, True]})
    assert kstate_phase.by_cell_text(frame, kstate_phase.arm_counts("hit")) == "at K = 3, p = 0.9: A 1/2, B 1/1"
    assert kstate_phase.by_cell_text(frame.iloc[:0], kstate_phase.arm_counts("hit")) == "none"


@pytest.mark.slow
def test_phase_glues_and_the_noise(loaded):
    from markovlib.beyond import kstate_stored

    phase = loaded["phase"]
    cells = {key: kstate_stored.cells_counts(phase, arm, side, col, want, reach)
             for key, (_, arm, side, col, want, reach) in kstate_phase.CLAIMS.items()}
    glues = kstate_phase.phase_glues(phase, cells, loaded["manifest"], 0.002, 8)
    assert glues["phase_n"] == "10" and glues["phase_d"] == "8" and glues["phase_count"] == "8 of 10"
    assert glues["phase_wilson_low"] == "0.49"
    noisy, sd = kstate_phase.add_batch_noise(phase, loaded["settings"])
    r = noisy.iloc[0]
    own = kstate_reference.batch_chain_score(int(r.K), float(r.p), int(r.seed), 256, 64)
    assert r.batch_rate == own and r.excess == r.final_loss - own and (sd > 0).all()
    settled, ratios = kstate_phase.settled_runs(noisy)
    assert len(ratios) > 0 and ratios.max() < 0.5 and settled.at_bigram.all()
    corrected, flips, n_inside = kstate_phase.noise_corrected(noisy, 0.02)
    assert flips == 0 and n_inside == int((noisy.capacity & noisy.resolvable).sum())
    assert "at_bigram_corrected" in corrected


@pytest.mark.slow  # re-executes or re-runs training
def test_replay_phase_slice_and_the_measured_prefix(loaded):
    dev = kstate_phase.replay_phase_slice(loaded, n_states=3, p=0.967, seeds=[0], steps=250)
    measured, text = kstate_phase.measured_prefix(DATA, 3, 0.967, [0], 250)
    assert dev < 3e-3 and 0 <= measured < 3e-3 / 4 + 1e-12 and "largest |re-executed - stored|" in text
    with pytest.raises(ValueError, match="no stored phase run"):
        kstate_phase.replay_phase_slice(loaded, n_states=3, p=0.5, seeds=[0], steps=250)


def test_drawings(grid, loaded):
    phase, runs = loaded["phase"], grid["runs"]
    n_K = len(set(runs.K))
    for fig in (kstate_drawings.grid_figure(runs), kstate_drawings.phase_figure(phase, 5000, 10),
                kstate_drawings.switching_figure(phase, loaded["curves"], 5000)):
        assert len(fig.axes) == n_K
        plt.close(fig)
    fig = kstate_drawings.slice_figure(grid["curves"], 3, 0.967)
    assert len(fig.axes[0].lines) == 10 + 2 + 1  # 10 stored curves, two yardsticks, the plateau L_1
    plt.close(fig)
    fig = kstate_drawings.lag_figure(kstate_grid.lag_table(DATA, 0.01))
    assert fig.axes[0].get_xlabel() == "lag k"
    plt.close(fig)
    with pytest.raises(ValueError, match="runs"):
        kstate_drawings.grid_figure(runs.iloc[:0])
