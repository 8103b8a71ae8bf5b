"""The chapter ``transformer_yardsticks``'s checks that theta_pi is a local minimum of the full model for p + q > 1 and
not one for p + q < 1 (Thm 5 of Makkuva et al., from the predecessor paper; the bound eq-thm5-bound and the explicit
directions of the chapter's remarks), and the figure of both kinds of evidence.

* :func:`perturbation_studies`: ``yardsticks.perturbation_study`` at theta_pi of each chain and radius, with the ratio
  dL / ((p + q - 1) pi_0 pi_1 kappa(w) ||delta e||^2) that the bound keeps above 1 - rho / kappa(w).
* :func:`direction_table`: ``yardsticks.direction_losses`` at several (chain, w): predicted and measured loss changes.
* :func:`trap_slices`: the exact loss along the canonical and positional-free directions at theta_pi(w) against the
  closed form ``logistic_loss`` at ``yardsticks.direction_c_beta``.
* :func:`evidence_figure`: the perturbations' loss changes (histogram) and the two slices.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import torch

from ..book import plotting
from ..book.formatting import bound, fraction
from ..markov.canonical import logistic_loss
from ..numerics import checks
from . import yardsticks
from .exact import exact_loss
from .inits import random_alpha
from .model import canonical_full_model

__all__ = ["Studies", "perturbation_studies", "direction_table", "Slices", "trap_slices", "evidence_figure"]


@dataclass
class Studies:
    """studies: {(label, radius): (dL, ||delta e||^2, ratio)} with label 'p+q=... > 1' or '... < 1'; kappa(w); radii."""
    studies: dict
    kappa_w: float
    radii: list
    n: int

    def side(self, above: bool) -> list:
        return [v for (lab, _), v in self.studies.items() if ("> 1" in lab) == above]

    @property
    def ratio_min(self) -> list:
        """The smallest ratio per radius, for p + q > 1."""
        return [float(v[2].min()) for v in self.side(True)]

    @property
    def n_high(self) -> int:
        """Perturbations that raised the loss, p + q > 1 (all radii)."""
        return sum(int((v[0] > 0).sum()) for v in self.side(True))

    @property
    def n_low(self) -> list:
        """Perturbations that lowered the loss per radius, p + q < 1."""
        return [int((v[0] < 0).sum()) for v in self.side(False)]

    @property
    def ratio_ok(self) -> bool:
        return all(rm >= 1 - rad / self.kappa_w for rm, rad in zip(self.ratio_min, self.radii))

    @property
    def C_hat(self) -> float:
        """The O(rho) constant at the largest radius: ratio = 1 - C rho / kappa(w)."""
        i = int(np.argmax(self.radii))
        return self.kappa_w * (1 - self.ratio_min[i]) / self.radii[i]

    def report(self) -> str:
        out = [f"{'chain':<16}{'rho':>7}{'n':>5}{'min dL':>12}{'max dL':>12}{'dL < 0':>9}{'min ratio':>11}"
               f"{'1 - rho/kappa':>16}"]
        for (label, radius), (dL, _, ratio) in self.studies.items():
            rmin = f"{ratio.min():>11.3f}" if "> 1" in label else f"{'-':>11}"
            out.append(f"{label:<16}{radius:>7.0e}{self.n:>5}{dL.min():>12.2e}{dL.max():>12.2e}"
                       f"{fraction((dL < 0).sum(), dL.size):>9}{rmin}{1 - radius / self.kappa_w:>16.3f}")
        return "\n".join(out)


def perturbation_studies(cases, w, radii, n, seed, n_exact) -> Studies:
    """For each (label, model, chain) of ``cases`` (theta_pi(w) of a chain) and each radius j of ``radii``: ``n``
    random perturbations of all weights (``yardsticks.perturbation_study``, seed seed + 30 + j) and the ratio of each
    exact loss change to (p + q - 1) pi_0 pi_1 kappa(w) ||delta e||^2."""
    radii = [checks.positive_real("radius", r) for r in radii]
    kappa_w = yardsticks.kappa(w)
    studies = {}
    for label, model, ch in cases:
        c0, c1 = ch.q / (ch.p + ch.q), ch.p / (ch.p + ch.q)
        for j, radius in enumerate(radii):
            dL, a2 = yardsticks.perturbation_study(model, ch, radius, n, seed + 30 + j, n_exact)
            studies[(label, radius)] = (dL, a2, dL / ((ch.p + ch.q - 1) * c0 * c1 * kappa_w * a2))
    return Studies(studies, kappa_w, radii, n)


def direction_table(cases, eps, seed, d, n_exact):
    """``yardsticks.direction_losses`` for each (label, chain, w, status) of ``cases``: the measured loss changes by
    (label, w, direction), the largest |measured - predicted|, the smallest |predicted|, and the table's text."""
    out = [f"{'chain':<10}{'w':>6}  {'status':<19}{'direction':<17}{'predicted dL':>14}{'measured dL':>14}"
           f"{'|meas - pred|':>15}"]
    signs, abs_max, pred_min = {}, 0.0, np.inf
    for label, ch, w, status in cases:
        for name, pred, meas in yardsticks.direction_losses(ch, w, eps, seed, d=d, n_exact=n_exact):
            abs_max, pred_min = max(abs_max, abs(meas - pred)), min(pred_min, abs(pred))
            signs[(label, w, name)] = meas
            out.append(f"{label:<10}{w:>6.2f}  {status:<19}{name:<17}{pred:>14.3e}{meas:>14.3e}"
                       f"{bound(meas - pred, 1e-13):>15}")
    out.append(f"smallest predicted |dL| {pred_min:.1e}; largest |measured - predicted| {bound(abs_max, 1e-13)}")
    return signs, abs_max, pred_min, "\n".join(out)


class Slices(NamedTuple):
    """The slices of :func:`trap_slices`: measured curves at ``eps``, closed forms {name: (at eps, at fine)}, the
    largest |full model - closed form| (err)."""
    curves: dict
    predicted: dict
    err: float
    eps: np.ndarray
    fine: np.ndarray


def trap_slices(chain, w, b_pi, d, n_exact, seed, eps=np.linspace(-0.3, 0.3, 25), fine=np.linspace(-0.3, 0.3, 301)):
    """The exact loss change of the full model (theta_pi(w) with bias ``b_pi``, seed ``seed``) along the canonical
    (e = eps alpha, p_n = -eps/2 alpha) and positional-free (p_n = 0) directions at the sizes ``eps``, and the closed
    form at ``eps`` and ``fine`` (a :class:`Slices`)."""
    eps, fine = checks.finite_array("eps", eps, ndim=1), checks.finite_array("fine", fine, ndim=1)
    alpha = torch.as_tensor(random_alpha(d, seed))
    trap = canonical_full_model(0.0, w, b_pi, d=d, max_len=n_exact - 1, seed=seed)
    L0 = float(exact_loss(trap, chain, n_exact).detach())
    curves = {"canonical": [], "positional-free": []}
    with torch.no_grad():
        for e in eps:
            for name, pos_scale in (("canonical", -e / 2), ("positional-free", 0.0)):
                trap.embedding.copy_(e * alpha)
                trap.positional.copy_((pos_scale * alpha).expand_as(trap.positional))
                curves[name].append(float(exact_loss(trap, chain, n_exact)) - L0)
    predicted = {k: [logistic_loss(*yardsticks.direction_c_beta(k, g, w, b_pi), chain.p, chain.q)
                     - chain.marginal_entropy for g in (eps, fine)] for k in curves}
    err = max(float(np.abs(np.array(curves[k]) - predicted[k][0]).max()) for k in curves)
    return Slices(curves, predicted, err, eps, fine)


def evidence_figure(studies: Studies, labels, r_small, w_local, slices: Slices, title):
    """Left: histograms of the loss changes / rho^2 of ``studies`` at the radius ``r_small`` for the two ``labels``
    (p + q > 1, p + q < 1); right: the ``slices`` of :func:`trap_slices`, measured and closed form."""
    curves, predicted, eps, fine = slices.curves, slices.predicted, slices.eps, slices.fine
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    for lab, color in zip(labels, (plotting.LOCAL, plotting.MAXIMA)):
        dL = studies.studies[(lab, r_small)][0]
        ax.hist(dL / r_small**2, bins=30, color=color, alpha=0.7, label=f"{lab}: {np.mean(dL < 0):.0%} lower the loss")
    ax.axvline(0, color=plotting.NEUTRAL, lw=1)
    ax.set(xlabel=r"exact loss change $\Delta\mathcal{L}\,/\,\rho^2$", ylabel="number of random perturbations",
           title=rf"Random perturbations of all weights at $\theta_\pi$ ($\rho$ = {r_small:g}, w = {w_local})")
    ax.legend(loc="upper left")
    ax = axes[1]
    for name, color, marker, text in (("canonical", plotting.LOCAL, "o", r"($p_n = -\frac{\varepsilon}{2}\alpha$)"),
                                      ("positional-free", plotting.MAXIMA, "s", r"($p_n = 0$)")):
        ax.plot(fine, predicted[name][1], color=color, label=f"{name} {text}: closed form")
        ax.plot(eps, curves[name], marker, color=color, ms=4, label=f"{name}: full model, exact loss")
    ax.axhline(0, color=plotting.NEUTRAL, lw=1)
    ax.set(xlabel=r"perturbation size $\varepsilon$ (embedding $e = \varepsilon\alpha$)",
           ylabel=r"$\mathcal{L} - H(\pi)$ (nats)", title=title)
    ax.legend(loc="lower left", fontsize=7.5)
    fig.tight_layout()
    return fig
