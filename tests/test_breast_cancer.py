"""markovlib.topology.breast_cancer: the split, the floor, the paired draws, a short batch of runs, the statistics
and the stored rows."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from markovlib.book.stored import data_dir
from markovlib.topology import breast_cancer, invariant_set


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return breast_cancer.split(X, y, 0, 0.3)


def test_split_and_floors(data):
    X_tr, X_te, y_tr, y_te = data
    assert X_tr.shape[1] == 30 and len(y_te) == 171 and np.allclose(X_tr.mean(0), 0) and np.allclose(X_tr.std(0), 1)
    f_tr, f_te = breast_cancer.bce_floors(y_tr, y_te)
    assert f_te == pytest.approx(np.mean(y_te == 0) * np.log(2)) and 0 < f_tr < np.log(2)


def test_initial_weights_are_paired_and_on_their_balances():
    W1, a, c = breast_cancer.initial_weights(3, [0, 1, 3], [0, 1], 0, 5, 1.0)
    assert W1.shape == (3, 2, 3, 5) and np.all(a > 0)
    for m in range(3):
        for j in range(2):
            assert np.allclose(invariant_set.neuron_balances(W1[m, j], a[m, j]), c[m, j])
    # the same draw for every n_plus: the directions of w_k agree
    u = W1 / np.linalg.norm(W1, axis=-1, keepdims=True)
    assert np.allclose(u[0], u[2])


def test_short_runs_keep_signs_and_the_floor(data):
    rows = breast_cancer.train_runs(data, 2, [0, 1, 2], [0, 1], 0, lr=0.05, steps=60, c_abs=1.0)
    assert len(rows) == 6 and all(r["patho_kept"] for r in rows)
    floor_tr, floor_te = breast_cancer.bce_floors(data[2], data[3])
    n, kept, n_zero, above, drift = breast_cancer.prop3_and_floor(rows, floor_tr, floor_te)
    assert (n, kept, n_zero, above) == (6, 6, 2, 2) and drift < 1
    assert 0 <= breast_cancer.mean_at(rows, "test_acc", 0) <= 1
    moved = breast_cancer.train_runs(data, 2, [0, 1, 2], [0, 1], 0, lr=0.05, steps=60, c_abs=1.0, perturb=1e-9)
    assert max(abs(r["test_bce"] - q["test_bce"]) for r, q in zip(rows, moved)) < 1e-6


def test_analyse_on_rows_with_a_known_trend():
    rows = [dict(width=w, n_plus=k, init=i, test_bce=1.0 - 0.1 * k + 0.01 * i) for w in (2, 3) for k in range(w + 1)
            for i in range(4)]
    A = breast_cancer.analyse(rows, 50, np.random.default_rng(0))
    assert A["widths"] == [2, 3] and all(s == pytest.approx(-0.1) for s in A["slope"].values())
    assert A["rss_num"] < 1e-20 and A["slope_hi"][3] == pytest.approx(-0.1)


def test_stored_rows_and_validation():
    manifest, rows = breast_cancer.read_stored(data_dir("breast_cancer"))
    assert len(rows) > 0 and set(manifest["parameters"]["widths"]) == {r["width"] for r in rows}
    with pytest.raises(ValueError, match="folder"):
        breast_cancer.read_stored(data_dir("breast_cancer").parent)
    with pytest.raises(ValueError, match="n_plus"):
        breast_cancer.initial_weights(2, [3], [0], 0, 5, 1.0)
    with pytest.raises(ValueError, match="c_abs"):
        breast_cancer.initial_weights(2, [1], [0], 0, 5, 0.0)
    with pytest.raises(ValueError, match="which"):
        breast_cancer.mean_at(rows, "test_acc", 1)
    with pytest.raises(ValueError, match="n_boot"):
        breast_cancer.analyse(rows, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="test_size"):
        breast_cancer.split(np.zeros((4, 2)), np.zeros(4), 0, 1.5)
