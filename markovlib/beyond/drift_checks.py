"""The closing chapter's steps (``book/closing``), one call each: the gradients and the common mechanism against
finite differences, the drawn flows of the three laws, the flows with weight decay against Prop. closing-prop-decay,
the drift study (GD, SGD, Adam and GD with decay at every step size over a fixed time) with its log-log slopes, the
one-step identities of Prop. closing-prop-gd and Adam's first step, and the prediction study (the theorems' predicted
ends under every optimizer, step size and weight decay). The references are :mod:`markovlib.beyond.drift_reference`
and ``topology.balance_drift.rk4_path``; every draw comes from the generator passed in, in the chapter's order.
"""
from __future__ import annotations

import numpy as np
import torch

from ..book.formatting import fixed
from ..numerics import checks
from ..numerics.numdiff import fd_gradient
from ..topology.balance_drift import rk4_path
from . import conservation, drift_problems, drift_reference, drift_study


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    return rng


KINDS = ("gd", "sgd", "adam", "gd+wd")
SHORT = {"E (Part I)": "E", "delta (Part II)": "delta", "c_k (Part III)": "c_k"}
LAW_SHORT = {"Part I: basin": "I", "Part II: interpolant": "II", "Part III: signs": "III"}


def gradient_checks(one, two, three, rng):
    """(largest |gradient - central finite difference of the written-out loss| over random points of the three
    problems, the largest |grad Q . grad L| (Prop. closing-prop-common: finite-difference gradient of E, 2 S theta for
    delta, a central difference of c_k along grad L), the largest relative difference of ``one.hessian`` to torch's
    Hessian of E). Points drawn from ``rng``: 5 of Part I, 3 of Part III, 3 of Part II."""
    rng = _rng(rng)
    th1 = rng.uniform(-1.5, 1.5, size=(5, 2))
    th3 = rng.uniform(-1, 1, size=(3, three.dim))
    th2 = rng.normal(size=(3, two.d + 1))
    grad_err = max(max(np.abs(fd_gradient(lambda t, pr=pr: drift_reference.loss(pr, t), t) - pr.grad(t[None])[0]).max()
                       for t in ths) for pr, ths in ((one, th1), (two, th2), (three, th3)))
    noether = max(np.abs((fd_gradient(lambda t: float(drift_reference.energy(t[None])[0]), t)
                          * one.grad(t[None])[0]).sum()) for t in th1)
    noether = max(noether, max(abs((2 * two.S @ t) @ two.grad(t[None])[0]) for t in th2))
    c_rate = lambda t: np.abs(three.quantity(t[None] + 1e-7 * three.grad(t[None]))
                              - three.quantity(t[None] - 1e-7 * three.grad(t[None]))).max() / 2e-7
    noether = max(noether, max(c_rate(t) for t in th3))
    hess_err = max(np.abs(torch.autograd.functional.hessian(drift_reference.energy_torch, torch.as_tensor(t)).numpy()
                          - one.hessian(t[None])[0]).max() / np.abs(one.hessian(t[None])[0]).max() for t in th1)
    return grad_err, noether, hess_err


def drawn_flows(one, two, three, rng2, rng3, *, t3, rk4_dt) -> dict:
    """The flows of the figure: Part I from three starts in both half planes (DOP853 to t = 100, ``paths1`` and their
    predicted ends ``ends1``), Part II at delta = 1, 0, -1 on the theorem's side (to t = 60, beta_0 from ``rng2``),
    Part III one network from ``rng3`` (RK4 at step ``rk4_dt`` to ``t3``, ``path3``); ``drift`` is the largest
    |Q(t) - Q(0)| of E and delta, ``drift3`` that of c_k."""
    E, grid = drift_reference.energy, lambda t: np.linspace(0.0, t, 400)
    inits1 = [np.array([0.3, -1.5]), np.array([0.5, -0.3]), np.array([-0.6, 0.8])]
    paths1 = [drift_reference.integrate(one.grad, th, 100.0, t_eval=grid(100.0)).y.T for th in inits1]
    inits2 = []
    for delta_, sgn in ((1.0, 1.0), (0.0, -1.0), (-1.0, 1.0)):
        b0 = 0.3 * _rng(rng2).normal(size=two.d)
        b0 *= np.sign(((two.X @ b0) * two.y).sum())  # on the theorem's side for the drawing
        inits2.append(drift_problems.theta_from(delta_, b0, sgn)[0])
    paths2 = [drift_reference.integrate(two.grad, th, 60.0, t_eval=grid(60.0)).y.T for th in inits2]
    th_net = np.concatenate([_rng(rng3).uniform(-1, 1, size=three.width * three.d),
                             rng3.uniform(-1, 1, size=three.width)])
    path3 = rk4_path(lambda y: -three.grad(y), th_net, t3, rk4_dt)[:, 0]
    return dict(paths1=paths1, ends1=[one.predict(th[None])[0] for th in inits1], paths2=paths2, path3=path3,
                drift=max(max(np.abs(E(P) - E(P[:1])).max() for P in paths1),
                          max(np.abs(two.quantity(P) - two.quantity(P[:1])).max() for P in paths2)),
                drift3=float(np.abs(three.quantity(path3) - three.quantity(path3[:1])).max()))


def drift_laws(one, two, three, n, rng, batches) -> dict:
    """The drift study's laws, name -> (gradient, quantity, ``n`` initializations from ``rng``, data size, batch):
    Part I's with |w_0| >= 0.2 (E the written-out reference), Part II's, Part III's; ``batches`` per law I, II, III."""
    rng = _rng(rng)
    return {"E (Part I)": (one.grad, drift_reference.energy, one.inits(n, rng, w_min=0.2), one.n_data, batches[0]),
            "delta (Part II)": (two.grad, two.quantity, two.inits(n, rng), two.n_data, batches[1]),
            "c_k (Part III)": (three.grad, three.quantity, three.inits(n, rng), three.n_data, batches[2])}


def flow_quantity(laws, law, t_end, weight_decay, rk4_dt):
    """Q at ``t_end`` along the flow with decay from each initialization of ``law`` (DOP853 for E and delta, RK4 at
    ``rk4_dt`` for c_k, where adaptive solvers stall at the kinks)."""
    gradf, Qf, th0 = laws[law][:3]
    if law == "c_k (Part III)":
        return Qf(rk4_path(lambda y: -gradf(y) - weight_decay * y, th0, t_end, rk4_dt)[-1])
    return np.array([Qf(drift_reference.integrate(gradf, th, t_end, weight_decay).y[:, -1][None, :])[0] for th in th0])


def decay_flows(laws, weight_decay, t, rk4_dt):
    """Prop. closing-prop-decay along the flows with decay to ``t``: (largest |delta(t) - delta(0) e^{-2 lambda t}|,
    the same for c_k (RK4), the largest |E(t) - E(0) - int_0^t -lambda (2e^2 - 2w^2 - sign w) ds| with the rate
    integrated by scipy's quad on DOP853's dense output)."""
    from scipy.integrate import quad

    decayed = {law: conservation.decay_law(laws[law][1](laws[law][2]), weight_decay, t) for law in laws}
    err2 = np.abs(flow_quantity(laws, "delta (Part II)", t, weight_decay, rk4_dt) - decayed["delta (Part II)"]).max()
    err3 = np.abs(flow_quantity(laws, "c_k (Part III)", t, weight_decay, rk4_dt) - decayed["c_k (Part III)"]).max()
    gradf, E, th0 = laws["E (Part I)"][:3]
    err_E = 0.0
    for th in th0:
        s = drift_reference.integrate(gradf, th, t, weight_decay)
        rate = lambda u, s=s: -weight_decay * (2 * s.sol(u)[0] ** 2 - 2 * s.sol(u)[1] ** 2 - np.sign(s.sol(u)[1]))
        dE = quad(rate, 0.0, t, epsabs=1e-12, epsrel=1e-12, limit=200)[0]
        err_E = max(err_E, abs(E(s.y[:, -1][None, :])[0] - E(th[None, :])[0] - dE))
    return float(err2), float(err3), float(err_E)


def drift_runs(laws, lrs, t, weight_decay, n_sgd, seed, rk4_dt, progress=None) -> dict:
    """The drift study: per law and optimizer of ``KINDS`` the median over the initializations (and ``n_sgd``
    minibatch sequences for SGD) of max_k |Q(T_h) - Q(0)| at every step h of ``lrs``, T_h = h round(t / h)
    (``conservation.run_optimizer``), and ``wd_vs_flow``: GD with decay against the decayed flow at T_h."""
    n_sgd = checks.positive_int("n_sgd", n_sgd)
    drift = {law: {k: np.zeros(len(lrs)) for k in KINDS + ("wd_vs_flow",)} for law in laws}
    for law, (gradf, Qf, th0, n_data, batch) in (progress or (lambda x: x))(laws.items()):
        for i, h in enumerate(lrs):
            steps = int(round(t / checks.positive_real("h", h)))
            q_flow = flow_quantity(laws, law, steps * h, weight_decay, rk4_dt)
            for k in KINDS:
                runs = [conservation.run_optimizer(gradf, th0, h, steps, quantity=Qf,
                                                   optimizer="gd" if k == "gd+wd" else k,
                                                   weight_decay=weight_decay if k == "gd+wd" else 0.0, n_data=n_data,
                                                   batch=batch, seed=seed + j)
                        for j in range(n_sgd if k == "sgd" else 1)]
                drift[law][k][i] = np.median(np.concatenate([r_.final_drift() for r_ in runs]))
                if k == "gd+wd":
                    dev = np.abs(runs[0].quantity[-1] - q_flow).reshape(len(th0), -1).max(axis=1)
                    drift[law]["wd_vs_flow"][i] = np.median(dev)
    return drift


def drift_slopes(drift, lrs) -> dict:
    """``slopes`` (law -> kind -> log-log slope of the median drift against h), ``text`` (kind -> the slopes at two
    decimals), Adam's drift over GD's at the smallest step per law (``adam_ratios``, their minimum ``adam_ratio``,
    ``adam_text`` at two digits)."""
    kinds = ("gd", "sgd", "adam", "wd_vs_flow")
    slopes = {law: {k: conservation.loglog_slope(lrs, drift[law][k]) for k in kinds} for law in drift}
    ratios = {law: drift[law]["adam"][-1] / drift[law]["gd"][-1] for law in drift}
    return dict(slopes=slopes, adam_ratios=ratios, adam_ratio=min(ratios.values()),
                text={k: ", ".join(f"{fixed(slopes[law][k], 2)} ({SHORT[law]})" for law in drift) for k in kinds},
                adam_text=", ".join(f"{ratios[law]:.1e} ({SHORT[law]})" for law in drift))


def one_step_quadratic(two, three, n, lrs, rng, batches):
    """Prop. closing-prop-gd for the quadratic laws: the largest |Q(theta - h g) - Q(theta) - h^2 g^T S g| over ``n``
    initializations of Parts II and III (drawn from ``rng``, II then III), the full gradient and ``n`` minibatch
    gradients each (batches ``batches`` = (II, III)), every h of ``lrs``; for c_k each neuron's own block of S."""
    rng = _rng(rng)
    err = 0.0
    for prob, th0, batch in ((two, two.inits(n, rng), batches[0]), (three, three.inits(n, rng), batches[1])):
        for idx in [None] + [rng.choice(prob.n_data, batch, replace=False) for _ in range(n)]:
            g = prob.grad(th0, idx)
            for h in lrs:
                change = prob.quantity(th0 - h * g) - prob.quantity(th0)
                if prob is two:
                    pred = h**2 * np.einsum("ni,ij,nj->n", g, two.S, g)
                else:
                    gW, ga = three.unpack(g)
                    pred = h**2 * ((gW**2).sum(2) - ga**2)
                err = max(err, np.abs(change - pred).max())
    return float(err)


def third_order_ratio(one, n, h, rng, batch):
    """For E: the median over ``n`` initializations (|w| >= 0.2, from ``rng``) and the full and ``n`` minibatch
    gradients of the remainder |E(theta - h g) - E(theta) - (h^2/2) g^T Hess(E) g| at ``h`` over that at h/2 (8 for a
    cubic remainder). Returns (ratio, the initializations)."""
    rng = _rng(rng)
    th0 = one.inits(n, rng, w_min=0.2)
    E, rem = drift_reference.energy, [np.zeros(0), np.zeros(0)]
    for idx in [None] + [rng.choice(one.n_data, batch, replace=False) for _ in range(n)]:
        g = one.grad(th0, idx)
        for j, hh in enumerate((h, h / 2)):
            rem[j] = np.concatenate([rem[j], np.abs(E(th0 - hh * g) - E(th0)
                                                    - 0.5 * hh**2 * np.einsum("ni,nij,nj->n", g, one.hessian(th0), g))])
    return float(np.median(rem[0] / rem[1])), th0


def adam_first_step(cases, h):
    """Adam's first step u = g / (|g| + 1e-8) (m_hat = g, v_hat = g^2 after the bias corrections), written out: per
    case (gradient, quantity, initializations) the median change of Q at ``h`` over that at h/2 (2 at first order)."""
    h = checks.positive_real("h", h)
    out = []
    for gradf, Qf, th in cases:
        g = gradf(th)
        u = g / (np.abs(g) + 1e-8)
        ch = [np.abs(Qf(th - hh * u) - Qf(th)).reshape(len(th), -1).max(axis=1) for hh in (h, h / 2)]
        out.append(float(np.median(ch[0] / ch[1])))
    return out


def prediction_inits(one, two, three, n, rng, h, t1, t2, conv_tol) -> dict:
    """The prediction study's initializations, from ``rng`` in this order: the training times of Parts I and II
    (``drift_study.training_time`` from ``t1``, ``t2`` at the step ``h``), then ``n`` per law by
    ``drift_study.draw_until``: Part I's converged predicted minima, Part II's converged runs, Part III's networks
    with a pathological neuron. Keys t1, t2, th1, th2, th3, drawn1, drawn2, drawn3, pred1, pred2."""
    rng = _rng(rng)
    minimum = lambda th: np.isin(one.predict(th), ["global_min", "local_min"])  # no saddles or maxima
    th_try = one.inits(n, rng)
    t1 = drift_study.training_time(one.grad, th_try[minimum(th_try)], h, t1, conv_tol)
    t2 = drift_study.training_time(two.grad, two.inits(n, rng), h, t2, conv_tol)
    th1, drawn1 = drift_study.draw_until(n, lambda m: one.inits(m, rng), lambda th: minimum(th)
                                         & drift_study.gd_converged(one.grad, th, h, t1, conv_tol),
                                         "converged predicted minima")
    th2, drawn2 = drift_study.draw_until(n, lambda m: two.inits(m, rng),
                                         lambda th: drift_study.gd_converged(two.grad, th, h, t2, conv_tol),
                                         "converged")
    th3, drawn3 = drift_study.draw_until(n, lambda m: three.inits(m, rng),
                                         lambda th: (three.quantity(th) < 0).any(axis=1),
                                         "networks with a pathological neuron")
    return dict(t1=t1, t2=t2, th1=th1, th2=th2, th3=th3, drawn1=drawn1, drawn2=drawn2, drawn3=drawn3,
                pred1=one.predict(th1), pred2=two.predict(th2))


def prediction_runs(one, two, three, inits, settings, *, beta_tol, t3, batches, seed, progress=None):
    """Every setting (optimizer, h, weight decay) of ``settings`` on each law's initializations (``inits``:
    :func:`prediction_inits`) for its training time (Part III ``t3``): per law (keys of ``LAW_SHORT``) and setting the
    boolean per initialization "did not diverge and ends where the theorem predicts" (the basin of Thm 2, the
    interpolant within ``beta_tol``, the signs of the pathological output weights). Returns (agree, counts)."""
    laws = {"Part I: basin": (one, inits["th1"], lambda th: one.agree(th, inits["pred1"]), inits["t1"], batches[0]),
            "Part II: interpolant": (two, inits["th2"], lambda th: two.agree(th, inits["pred2"], beta_tol), inits["t2"],
                                     batches[1]),
            "Part III: signs": (three, inits["th3"], lambda th: three.agree(th, inits["th3"]), t3, batches[2])}
    agree = {law: {} for law in laws}
    for law, (prob, th0, agf, t_end, batch) in (progress or (lambda x: x))(laws.items()):
        for k, h, lam in settings:
            run = conservation.run_optimizer(prob.grad, th0, h, int(round(t_end / h)), quantity=prob.quantity,
                                             optimizer=k, weight_decay=lam, n_data=prob.n_data, batch=batch, seed=seed)
            agree[law][(k, h, lam)] = agf(run.theta[-1]) & ~run.diverged
    return agree, {law: {key: int(v.sum()) for key, v in agree[law].items()} for law in laws}


def largest_steps(count, pred_lrs, decays, h0, n, rate, z):
    """Per law and optimizer (and "wd": the decays with GD at ``h0``) the largest grid value at which the prediction
    demonstrably holds (``drift_study.largest_holding``; None if none), and per kind the text over the laws."""
    summary = {}
    for law in count:
        for k in ("gd", "sgd", "adam"):
            summary[(law, k)] = drift_study.largest_holding({h: count[law][(k, h, 0.0)] for h in pred_lrs}, n, rate, z)
        summary[(law, "wd")] = drift_study.largest_holding({lam: count[law][("gd", h0, lam)] for lam in decays}, n,
                                                           rate, z)
    names = [LAW_SHORT[law] for law in count]
    return summary, {k: drift_study.largest_text([summary[(law, k)] for law in count], names)
                     for k in ("gd", "sgd", "adam", "wd")}


def most_fragile(summary, laws) -> str:
    """The law(s) whose prediction holds up to the smallest GD step, or those at which it holds at no GD step."""
    unresolved = [law for law in laws if summary[(law, "gd")] is None]
    if unresolved:
        return " and ".join(unresolved) + " (its prediction holds demonstrably at no GD step of the grid)"
    h_min = min(summary[(law, "gd")] for law in laws)
    fragile = [law for law in laws if summary[(law, "gd")] == h_min]
    return " and ".join(fragile) + (f" (tied, largest GD step {h_min:g})" if len(fragile) > 1
                                    else f" (largest GD step {h_min:g})")
