"""markovlib.transformer.escape_stored, escape_rates and escape_drawings on the committed stored set."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from markovlib.markov.energy import SADDLE_ENERGY  # noqa: E402
from markovlib.transformer import escape_drawings, escape_rates, escape_stored  # noqa: E402


@pytest.fixture(scope="module")
def S():
    return escape_stored.load()


@pytest.fixture(scope="module")
def esc(S):
    return escape_stored.escapes(S, 0.5)


def test_load_escapes_and_verdict(S, esc):
    ok, measured = escape_stored.completeness(S)
    assert ok and measured.startswith(f"{len(S.runs)} of {len(S.runs)} runs")
    assert escape_stored.stored_escapes_agree(S, esc)
    assert not escape_stored.stored_escapes_agree(S, esc.fillna(0.0) + 50)
    later = escape_stored.escapes(S, 0.9)
    both = esc.notna() & later.notna()
    assert (later[both] >= esc[both]).all() and later.isna().sum() >= esc.isna().sum()  # a higher bar is met later
    V = escape_stored.init_verdict(S)
    assert V["same_init"] and V["e0_needed"] > V["init"].e.abs().max()
    assert all(k == n for k, n in V["counts"].values())  # Thm 2: every stored start flows to the unigram line
    with pytest.raises(ValueError, match="escape_ratio"):
        escape_stored.escapes(S, 0)


def test_survival_claims_pairs_basin_lags(S, esc):
    km, table = escape_stored.survival(S, esc)
    assert len(table) == len(S.arms) == len(km)
    A = escape_stored.arm_claims(S, esc, 0.5)
    assert A["k_sgd"] == sum(r["k"] for r in A["sgd"]) and A["n_sgd"] + A["n_adam"] == len(S.runs)
    sgd = esc[esc.index.get_level_values("optimizer").isin(escape_stored.SGD_LIKE)]
    assert A["k_sgd"] == int(sgd.isna().sum())
    pairs = escape_stored.seed_pairs(S, esc)
    assert len(pairs["decay"]) == len(S.chains) * len(S.lrs["adam"]) and len(pairs["lr"]) == 2 * len(S.chains)
    outside = escape_stored.basin(S)
    assert len(outside) == A["n_sgd"]
    idx, lag, lag_table = escape_stored.lags(S, esc)
    assert len(idx) == int(esc.notna().sum()) - (A["n_sgd"] - A["k_sgd"]) and len(lag_table) == len(A["adam_arms"])
    places = escape_stored.escape_places(S, esc, idx)
    assert [pq for pq, _ in places] == S.chains and "above $E_{sad}$ in " in places[0][1]


def test_rates(S, esc):
    early, late, lines = escape_rates.drift_exponents(S, esc, 50, 1000)
    assert len(early) == len(late) == len(lines) == 2 * len(S.chains)
    assert all(np.isfinite(v) for v in late.values())
    with pytest.raises(AssertionError, match="drift window"):
        escape_rates.drift_exponents(S, esc, 5000, 6000)
    M = escape_rates.adam_moves(S, 50)
    assert M["n_cross"]["adam"][1] == len(S.runs) // 2 and len(M["ratios"]) == len(S.chains)
    n_rise, n_neg, need = escape_rates.extrapolate(S, 1000)
    assert 0 < n_rise <= n_neg and need > 0
    move, gap = escape_rates.sgd_energy_move(S)
    assert (gap > 0).all() and len(move) == n_neg
    prefix, reach = escape_rates.prefix_reach()
    assert len(reach) == len(S.runs) and int(reach.min()) >= 50
    assert SADDLE_ENERGY < 0


def test_replay_reproduces_the_stored_start(S):
    rows, worst = escape_rates.replay(S, 0, 50)
    assert rows == 2 * len(S.arms) and worst < 1e-4


def test_drawings(S, esc):
    km, _ = escape_stored.survival(S, esc)
    fig = escape_drawings.survival_figure(S, km)
    assert len(fig.axes) == len(S.chains)
    plt.close(fig)
    with pytest.raises(ValueError, match="km must hold"):
        escape_drawings.survival_figure(S, {})
    small = escape_stored.EscapeSet(S.manifest, S.runs, S.curves[S.curves.seed.isin(S.seeds[:2])], S.chains, S.lrs,
                                    S.horizon, S.seeds[:2], S.arms)
    fig = escape_drawings.energy_figure(small, esc)
    assert len(fig.axes) == len(S.chains) * len(S.lrs)
    plt.close(fig)
    with pytest.raises(ValueError, match="clip"):
        escape_drawings.energy_figure(small, esc, clip=0)
    assert isinstance(small.curves, pd.DataFrame)


def test_escape_above_matches_the_places(S, esc):
    idx, _, _ = escape_stored.lags(S, esc)
    for (k, n), (_, text) in zip(escape_stored.escape_above(S, esc, idx), escape_stored.escape_places(S, esc, idx)):
        assert text.startswith(f"above $E_{{sad}}$ in {k}/{n}")
