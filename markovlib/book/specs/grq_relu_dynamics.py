"""The declared parameters of the chapter grq_relu_dynamics (the dynamics of a two-layer ReLU network)."""
from __future__ import annotations

from markovlib.book import params

SEED, COUNT = "a seed", "claims over seeds are counts with a Wilson interval"
CLAIMS_3_4, CIRCLE = "the stated range of claims 3 and 4", "a Hamming distance on the circle"
RATE = "a learning rate is positive"


def stated(rule, value, why):
    """A parameter pinned at its stated value (``rule`` is params.Int or params.Real)."""
    return rule(value, value, why=why)


def fraction(hi, why):
    """A real in (0, hi)."""
    return params.Real(0.0, hi, closed=False, why=why)


SPEC = params.declare(
    cons_d=params.Int(2, why="in d = 1 the direction bhat_k = sgn(w_k) cannot turn: the direction equations read "
                             "0 = 0"),
    cons_n=params.Int(1, why="the flow identities hold for any data"),
    cons_h=params.Int(1, why="the flow identities hold for any width"), cons_seed=params.Int(0, why=SEED),
    gammas=params.RealList(0.0, 1.0, why="leaky slopes: 0 is the ReLU, 1 the linear network"),
    eta_a=fraction(float("inf"), RATE), eta_w=fraction(float("inf"), RATE),
    ode_tol=fraction(1e-6, "a rounding tolerance"),
    regime_ratios=params.RealList(10.0, 1e6, why="the approximations need |delta_k| >> |mu_k|"),
    xor_n=params.Int(16, 24, why=CLAIMS_3_4), xor_jitter=params.Real(0.0, 0.5, why="points stay near their diagonal"),
    xor_h=params.Int(16, 24, why=CLAIMS_3_4),
    xor_tau=params.Real(0.05, 0.1, why="the stated range of small overall scales"),
    xor_lr_fast=stated(params.Real, 0.0002, "the stated learning rate of the first phase"),
    xor_steps_fast=stated(params.Int, 2500, "time 0.5, the stated horizon of the first phase"),
    xor_lr=stated(params.Real, 0.01, "the stated learning rate of the second phase"),
    xor_steps=stated(params.Int, 5000, "time 50, the stated horizon of the second phase"),
    seed=params.Int(0, why=SEED), n_seeds=params.Int(10, why=COUNT),
    n_circle=params.Int(360, why="a resolution of one degree"),
    claim_rate=params.Real(0.5, 0.99, why="a count's Wilson lower end must exceed at least 1/2"),
    a_const_max=fraction(1.0, "a fraction of the readout's size"),
    a_grow_min=params.Real(1.0, 100.0, why="growth beyond the readout's size"),
    ham_rich_min=fraction(0.5, CIRCLE), ham_frac=fraction(1.0, "a fraction of the final distance"),
    f_small=fraction(1.0, "below the labels' size 1"), ham_lazy_max=fraction(0.5, CIRCLE),
    loss_fit=fraction(1.0, "below the loss 1 of the zero map"),
    f1_seed=params.Int(0, why=SEED), f1_n_seeds=params.Int(10, why=COUNT),
    f1_steps=params.Int(1000, 2000, why="the stated range of claim 5"),
    f1_lr_small=stated(params.Real, 0.05, "the stated learning rate at tau = 0.1 (time 100 at 2000 steps)"),
    f1_lr_large=stated(params.Real, 0.0125, "the stated learning rate at tau = 2"),
    turn_ratio=params.Real(1.0, 1e6, why="a ratio above 1"), kd_ratio=params.Real(1.0, 1e6, why="a ratio above 1"),
    require=[("xor_h even", lambda v: v["xor_h"] % 2 == 0, "the student pairs neurons with opposite readouts")],
)
