"""markovlib.topology.breast_cancer_checks and breast_cancer_drawings (the chapter topo_breast_cancer: Sec. 6 and
Fig. 4 of Nurisso et al.)."""
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402

from markovlib.book.stored import data_dir  # noqa: E402
from markovlib.topology import breast_cancer, breast_cancer_checks, breast_cancer_drawings, torch_reference  # noqa: E402


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return breast_cancer.split(X, y, 0, 0.3)


@pytest.fixture(scope="module")
def rows(data):
    return [r for w in (2, 3) for r in breast_cancer.train_runs(data, w, list(range(w + 1)), [0, 1], 0, lr=0.05,
                                                                 steps=40, c_abs=1.0)]


def test_torch_references_agree(data):
    X_tr, _, y_tr, _ = data
    W1, a, _ = breast_cancer.initial_weights(3, [0, 3], [0], 0, X_tr.shape[1], 1.0)
    assert torch_reference.autograd_bce(W1[:, 0], a[:, 0], X_tr, y_tr) < 1e-12
    assert torch_reference.sgd_difference(W1[1, 0], a[1, 0], X_tr, y_tr, lr=0.05, steps=10) < 1e-10
    with pytest.raises(ValueError, match="steps"):
        torch_reference.sgd_difference(W1[1, 0], a[1, 0], X_tr, y_tr, lr=0.05, steps=0)


def test_summarize_and_tables(data, rows):
    floor_tr, floor_te = breast_cancer.bce_floors(data[2], data[3])
    A = breast_cancer.analyse(rows, 20, np.random.default_rng(0))
    benign = float(np.mean(data[3] == 1))
    B = breast_cancer_checks.summarize(rows, A, floor_tr, floor_te, benign, 0.1)
    assert (B["n_runs"], B["n_kept"], B["n_zero"], B["n_above"], B["n_zero_runs"]) == (14, 14, 4, 4, 4)
    assert B["n_ge_benign"] == 4 and 0 < B["zero_malig"] <= 1 and B["hi"] == pytest.approx(1.0)
    assert B["n_neg"] == int(np.sum(A["slopes"].mean(0) < 0)) and set(B["rise_last"]) <= {2, 3}
    table = breast_cancer_checks.bce_table(A).splitlines()
    assert len(table) == 3 and len(table[2].split()) == 1 + 4 + 1  # l, four cell means, the slope
    ties = breast_cancer_checks.tie_table(rows).splitlines()
    assert ties[1].split()[4] == f"{benign:.3f}"  # n_+ = 0 with f >= 0: every point benign
    live = breast_cancer_checks.live_text(B, A, 2, 0.1).splitlines()
    assert "14/14" in live[1] and "4/4" in live[2] and live[3:6] == table and live[6].endswith(f"{B['n_neg']}/2")
    text = breast_cancer_checks.ties_text(B, A, rows, 20, floor_te, benign).splitlines()
    assert text[0].startswith("(c)") and "4/4" in text[1] and text[-3:] == ties


def test_write_rows(tmp_path, rows):
    breast_cancer_checks.write_rows(rows, tmp_path / "sub" / "r.csv")
    with open(tmp_path / "sub" / "r.csv") as fh:
        back = list(csv.DictReader(fh))
    assert len(back) == len(rows) and float(back[0]["test_bce"]) == pytest.approx(rows[0]["test_bce"])
    with pytest.raises(ValueError, match="rows"):
        breast_cancer_checks.write_rows([], tmp_path / "x.csv")


def test_stored_slice_and_summary(data):
    manifest, stored = breast_cancer.read_stored(data_dir("breast_cancer"))
    mp = manifest["parameters"]
    n, err, sens = breast_cancer_checks.stored_slice(data, stored, mp["seed"], width=2, inits=1, lr=mp["lr"],
                                                     steps=mp["steps"], c_abs=mp["c_abs"])
    assert n == 3 and err < 1e-9 and sens < 1e-9
    with pytest.raises(ValueError, match="width"):
        breast_cancer_checks.stored_slice(data, stored, mp["seed"], width=99, inits=1, lr=0.05, steps=1, c_abs=1.0)
    SA = breast_cancer.analyse(stored, 20, np.random.default_rng(0))
    S = breast_cancer_checks.stored_summary(stored, SA, *breast_cancer.bce_floors(data[2], data[3]), 0.1)
    assert S["s_runs"] == len(stored) and S["s_kept"] == S["s_runs"] and set(S["np2"]) == set(SA["widths"])
    w = SA["widths"][0]
    want = np.mean([r["test_acc"] for r in stored if r["width"] == w and r["n_plus"] == w]) - np.mean(
        [r["test_acc"] for r in stored if r["width"] == w and r["n_plus"] == 0])
    assert S["acc_gap"][w] == pytest.approx(want)
    text = breast_cancer_checks.stored_text(S, SA, stored, mp, 0.1).splitlines()
    assert len(text) == 8 and text[0].startswith(f"stored: {len(stored)} runs") and f"l = {w}: " in text[-1]


def test_drawings(data, rows):
    manifest, stored = breast_cancer.read_stored(data_dir("breast_cancer"))
    A = breast_cancer.analyse(rows, 5, np.random.default_rng(0))
    SA = breast_cancer.analyse(stored, 5, np.random.default_rng(0))
    fig = breast_cancer_drawings.draw_fig4(SA, A, 0.25, 0.25)
    assert len(fig.axes) == 8 and "Fig. 4" in fig._suptitle.get_text()  # 6 panels and 2 colour bars
    plt.close(fig)
    fig = breast_cancer_drawings.draw_accuracy(stored, SA, rows, A, 0.6)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == len(SA["widths"])
    plt.close(fig)
    with pytest.raises(ValueError, match="SA"):
        breast_cancer_drawings.draw_fig4({}, A, 0.25, 0.25)
