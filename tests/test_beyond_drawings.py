"""markovlib.beyond.drawings: the K-state explorer draws headless and reports what it shows."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.beyond import drawings, multistate  # noqa: E402


@pytest.mark.parametrize("K, p", [(2, 0.1), (3, 0.95), (5, 0.4), (10, 0.99)])
def test_draw_kstate_reports_lambda_ladder_and_the_sign_of_q(K, p):
    import matplotlib.pyplot as plt

    out = drawings.draw_kstate(K, p)
    plt.close("all")
    assert out["lambda"] == pytest.approx(1 - K * p / (K - 1), abs=1e-15)
    assert out["p_star"] == pytest.approx((K - 1) / K)
    ladder = np.array(out["ladder"])
    assert ladder[0] == pytest.approx(np.log(K))
    assert ladder[-1] == pytest.approx(multistate.symmetric_entropy_rate(K, p))
    # away from p* the sign of Q is the corollary's: Q > 0 (a trap along E) exactly when lambda < 0
    assert abs(out["lambda"]) >= 0.1 and out["trap"] == (out["lambda"] < 0) == (out["Q"] > 0)


def test_small_weight_hessian_is_close_to_the_corollary_and_deterministic():
    # Q ~ -(2 lambda / K) |E0|^2 for a centred E0 (beyond-cor-small-init): same sign, same order, far from p*
    q1 = drawings.small_weight_hessian(3, 0.05, seed=1)
    assert q1 == drawings.small_weight_hessian(3, 0.05, seed=1)
    assert q1 < 0 and drawings.small_weight_hessian(3, 0.95, seed=1) > 0


@pytest.mark.parametrize("kw, message", [(dict(K=1, p=0.5), "K must be"), (dict(K=13, p=0.5), "K must be"),
                                         (dict(K=3, p=1.5), "p"), (dict(K=3.5, p=0.5), "K")])
def test_bad_arguments_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        drawings.draw_kstate(**kw)
