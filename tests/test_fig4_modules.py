"""markovlib.transformer.fig4_reference, fig4_checks, fig4_stored, fig4_drawings."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from markovlib.book.specs.authors_fig4 import STORED  # noqa: E402
from markovlib.markov.chain import MarkovChain  # noqa: E402
from markovlib.transformer import fig4_checks, fig4_drawings, fig4_reference, fig4_stored, two_token  # noqa: E402
from markovlib.transformer.config import recipe  # noqa: E402
from markovlib.transformer.model import MarkovTransformer  # noqa: E402
from markovlib.transformer.training import Trainer  # noqa: E402

torch.set_num_threads(1)
LABELS = {"standard": "s", "authors_submission": "sub", "authors_public": "pub", "guideline": "g"}


def test_binary_by_hand_is_the_package_map():
    gen = torch.Generator().manual_seed(0)
    m2 = fig4_checks.random_weights(MarkovTransformer(4, 16, n_states=2), gen)
    x = MarkovChain(0.5, 0.8).sample(2, 16, seed=0, backend="torch")
    with torch.no_grad():
        l2 = m2(x)
        assert torch.allclose(fig4_reference.binary_by_hand(m2)(x), l2[..., 1] - l2[..., 0], atol=1e-12)
        assert torch.allclose(fig4_reference.binary_by_hand(m2)(x), two_token.binary_equivalent(m2)(x), atol=1e-12)
    with pytest.raises(ValueError, match="2-token"):
        fig4_reference.binary_by_hand(MarkovTransformer(4, 16))
    with pytest.raises(ValueError, match="generator"):
        fig4_checks.random_weights(m2, 0)


def _public_run(seed=0, loss=None):
    cfg = dict(p=0.5, q=0.8, model="two_token", init="authors_public", seed=seed, eval_every=1, device="cpu",
               **recipe("authors_fig4", steps=1, length=16))
    weights = {k: v.detach().numpy() for k, v in Trainer(progress=False, **cfg).model.state_dict().items()}
    h = MarkovChain(0.5, 0.8).marginal_entropy if loss is None else loss
    return cfg, {"history": [{"step": 0, "eval_loss": h}], "weights": weights}


def test_heldout_c_hat_and_live_outcomes_of_the_public_init():
    cfg, res = _public_run()
    c_hat, se = fig4_reference.heldout_c_hat(cfg, res["weights"], noise_batches=4, length=16)
    assert c_hat == 0.0 and se == 0.0  # e = E_1 - E_0 = 0: every logit is the same
    out = fig4_checks.live_outcomes([cfg], [res], {"authors_public": "authors_public"}, at_tol=0.02, pin_z=3.0,
                                    noise_batches=4, length=16)
    (at_h, pinned, ratio, noise), = out[(0.5, 0.8), "authors_public"]
    assert at_h and pinned and ratio == 0.0 and noise == 0.0
    cfg2, res2 = _public_run(loss=0.1)
    out = fig4_checks.live_outcomes([cfg2], [res2], {"authors_public": "p"}, at_tol=0.02, pin_z=3.0,
                                    noise_batches=4, length=16)
    assert not out[(0.5, 0.8), "p"][0][0]
    with pytest.raises(ValueError, match="noise_batches"):
        fig4_reference.heldout_c_hat(cfg, res["weights"], noise_batches=1, length=16)
    with pytest.raises(ValueError, match="pair up"):
        fig4_checks.live_outcomes([cfg], [], {}, at_tol=0.02, pin_z=3.0, noise_batches=4, length=16)


def test_map_velocity_and_inits():
    gen = torch.Generator().manual_seed(0)
    MAP = fig4_checks.map_check([2], [4, 8], (0.5, 0.8), 0, gen)
    assert MAP["n"] == 6 and MAP["logit"] < 1e-12 and MAP["loss"] < 1e-12 and MAP["pkg"] < 1e-12
    VEL = fig4_checks.velocity_check((0.5, 0.8), 0, gen)
    assert VEL["err"] < 1e-12 and abs(VEL["ratio"] - 1) > 0.1
    INITS = fig4_checks.authors_inits(8, (0.5, 0.8), 0)
    assert INITS["sub"].w == pytest.approx(-8) and INITS["pub"].w == pytest.approx(-16)
    assert INITS["e_pub"] == 0 and INITS["relu_margin"] < 0 and INITS["start_pub"] == pytest.approx(math.log(2))


def test_stored_tables_and_claims():
    tables = fig4_stored.outcome_tables(STORED, LABELS, 0.02)
    assert list(tables) == [(0.5, 0.8), (0.2, 0.3)]
    text = fig4_stored.outcome_table(tables, LABELS, 0.02)
    assert text.startswith("p = 0.5, q = 0.8 (p + q > 1)") and text.count("seeds") == 8
    claims = fig4_stored.stored_claims(STORED, tables, at_tol=0.02, c_pin=0.05, reach_by=300, plateau_from=100,
                                       plateau_steps=200)
    assert len(claims) == 6
    name, flags = claims["public-code init at p + q > 1 ends within at_tol of H(pi)"]
    assert name == "af4_pub_stay" and len(flags) == 20 and sum(flags) >= 15
    _, guide = claims["guideline (1, -1) ends within at_tol of the entropy rate (both chains)"]
    assert len(guide) == 40
    with pytest.raises(ValueError, match="at_tol"):
        fig4_stored.outcome_table(tables, LABELS, 0.0)


def test_drawings_return_figures():
    tables = fig4_stored.outcome_tables(STORED, LABELS, 0.02)
    assert len(fig4_drawings.stored_curves(STORED, tables, LABELS).axes) == 2
    leaves = {init: np.array([100.0, np.nan, 300.0]) for init in LABELS}
    fig, kms = fig4_drawings.leave_survival(leaves, LABELS, 1000, "t")
    assert kms["standard"].survival[-1] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="horizon"):
        fig4_drawings.leave_survival(leaves, LABELS, 0, "t")
    plt.close("all")
