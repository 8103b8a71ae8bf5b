"""markovlib.topology.drawings: Part III's explorers draw headless and report what they show, checked against
counts made here by other routes (Cor. 1 written out, the Student-t form of App. F's probability)."""
import itertools

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from markovlib.topology import drawings  # noqa: E402


def _close():
    import matplotlib.pyplot as plt

    plt.close("all")


def _components(d, e, lp, lm):
    """Cor. 1 by counting the S^0 factors: a positive neuron's quadric is S^{d-1} x R^e (two pieces iff d = 1), a
    negative one's S^{e-1} x R^d (two pieces iff e = 1); a product has the product of the counts."""
    return (2 if d == 1 else 1) ** lp * (2 if e == 1 else 1) ** lm


@pytest.mark.parametrize("d, e, lp, lm", [(2, 1, 0, 1), (2, 1, 1, 2), (3, 1, 2, 3), (1, 2, 2, 1), (1, 1, 1, 1),
                                          (3, 2, 2, 1), (2, 2, 1, 1)])
def test_draw_invariant_set_reports_betti_numbers_and_components(d, e, lp, lm):
    out = drawings.draw_invariant_set(d, lp, lm, e=e)
    _close()
    betti = out["betti"]
    # the Betti numbers sum to P(1) = 2^{l+ + l-} and alternate to the Euler characteristic P(-1)
    assert sum(betti) == 2 ** (lp + lm)
    assert sum((-1) ** k * b for k, b in enumerate(betti)) == (1 + (-1) ** (d - 1)) ** lp * (1 + (-1) ** (e - 1)) ** lm
    assert out["components"] == betti[0] == _components(d, e, lp, lm)
    if e == 1 < d:
        assert out["components"] == 2 ** lm and out["effective"] == lm + 1  # Cor. 2, Thm 2
    assert len(out["c"]) == lp + lm and sum(np.sign(out["c"])) == lp - lm


def test_the_3d_view_keeps_each_trajectory_on_its_quadric_and_the_pathological_signs():
    out = drawings.draw_invariant_set(2, 1, 2, e=1)
    _close()
    assert out["drift"] < 0.05  # O(lr) drift of the balances at lr 0.01
    assert out["sign_kept"][1:] == [True, True]  # Prop. 3: the pathological neurons' output signs
    W1p, ap, drift = drawings.flow_on_quadrics([1.0, -1.0], seed=3)
    c_path = np.sum(W1p**2, axis=-1) - ap**2
    assert np.allclose(c_path[0], [1.0, -1.0], atol=1e-12)
    assert np.max(np.abs(c_path - c_path[0])) <= drift.max() + 1e-12 < 0.05


def test_no_3d_view_away_from_d2_e1():
    out = drawings.draw_invariant_set(3, 1, 1, e=1)
    _close()
    assert "drift" not in out


def test_poly_text():
    assert drawings.poly_text([2, 2]) == "2 + 2x"
    assert drawings.poly_text([1, 0, 2, 0, 1]) == "1 + 2x^2 + x^4"


def _student_t(d, l, scheme):
    """App. F by another route: a / s_a over ||w|| / (sqrt(d) s_w) is Student-t with d degrees of freedom, so
    p = P[a^2 > ||w||^2] = 2 P[T > sqrt(arg)]."""
    arg = l if scheme == "kaiming" else d * (l + 1) / (d + l)
    p = 2 * stats.t.sf(np.sqrt(arg), d)
    return -np.expm1(l * np.log1p(-p))


@pytest.mark.parametrize("d, l", list(itertools.product([1, 2, 3, 5, 10, 30], [1, 2, 5, 10, 100, 1000])))
def test_draw_obstruction_agrees_with_the_student_t_form(d, l):
    out = drawings.draw_obstruction(d, l)
    _close()
    for scheme in ("kaiming", "xavier"):
        assert out[scheme] == pytest.approx(_student_t(d, l, scheme), rel=1e-9, abs=1e-300)
        # the readout's three digits are the same by either route
        assert f"{out[scheme]:.3g}" == f"{_student_t(d, l, scheme):.3g}"


def test_obstruction_at_one_neuron_one_input_is_one_half():
    # d = l = 1, Kaiming: a and w are i.i.d. N(0, 2), so P[a^2 > w^2] = 1/2 by symmetry
    out = drawings.draw_obstruction(1, 1)
    _close()
    assert out["kaiming"] == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: drawings.draw_invariant_set(0, 1, 1), "d must be"),
    (lambda: drawings.draw_invariant_set(2, 0, 0), "at least 1"),
    (lambda: drawings.draw_invariant_set(2, 4, 3), "at most"),
    (lambda: drawings.draw_invariant_set(2, 1.5, 1), "l_plus"),
    (lambda: drawings.draw_invariant_set(2, 1, 1, e=7), "e must be"),
    (lambda: drawings.draw_obstruction(2, 0), "l must be"),
    (lambda: drawings.draw_obstruction(True, 3), "d must be"),
    (lambda: drawings.flow_on_quadrics([1.0, 0.0]), "nonzero"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
