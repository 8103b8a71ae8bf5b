"""Independent references in torch for Part III's shallow ReLU network f(x) = a . relu(W1 x) (Nurisso et al., NeurIPS
2024, Eq. (10)): the losses, their gradients and gradient descent written with torch's own functions and autograd,
compared with :mod:`markovlib.topology.shallow_relu`. Used by the chapters ``topo_breast_cancer`` and
``topo_obstruction``.

* :func:`autograd_bce` -- the BCE with logits and its gradient, by torch autograd;
* :func:`sgd_difference` -- a torch.optim.SGD loop on the BCE or the MSE against gradient descent.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import shallow_relu

__all__ = ["autograd_bce", "sgd_difference"]


def autograd_bce(W1s, a_s, X, y) -> float:
    """Independent reference: the largest difference, over the networks W1s[m] (l, d), a_s[m] (l,), between
    :func:`shallow_relu.loss_grad` of the BCE (value and gradient) and torch's binary_cross_entropy_with_logits of
    a . relu(W1 x) with autograd."""
    import torch

    W1s, a_s = checks.finite_array("W1s", W1s, ndim=(3,)), checks.finite_array("a_s", a_s, ndim=(2,))
    L, g1, ga = shallow_relu.loss_grad(W1s, a_s, X, y, "bce")
    err = 0.0
    for m in range(len(W1s)):
        t1, ta = torch.tensor(W1s[m], requires_grad=True), torch.tensor(a_s[m], requires_grad=True)
        tl = torch.nn.functional.binary_cross_entropy_with_logits(torch.relu(torch.tensor(X) @ t1.T) @ ta,
                                                                  torch.tensor(y))
        r1, ra = torch.autograd.grad(tl, (t1, ta))
        err = max(err, abs(float(tl.detach()) - L[m]), np.abs(r1.numpy() - g1[m]).max(),
                  np.abs(ra.numpy() - ga[m]).max())
    return float(err)


def sgd_difference(W1, a, X, y, *, lr, steps, kind="bce") -> float:
    """Independent reference: the largest weight difference after ``steps`` full-batch steps of size ``lr`` between
    torch.optim.SGD and :func:`shallow_relu.gradient_descent` of the same ``kind``: "bce" (torch's BCE with logits of
    a . relu(W1 x)) or "mse" (mean (a . relu(W1 x) - y)^2 / 2)."""
    import torch

    lr, steps = checks.positive_real("lr", lr), checks.positive_int("steps", steps)
    checks.choice("kind", kind, ("bce", "mse"))
    t1, ta = torch.tensor(W1, requires_grad=True), torch.tensor(a, requires_grad=True)
    opt = torch.optim.SGD([t1, ta], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        f = torch.relu(torch.tensor(X) @ t1.T) @ ta
        if kind == "bce":
            torch.nn.functional.binary_cross_entropy_with_logits(f, torch.tensor(y)).backward()
        else:
            (0.5 * ((f - torch.tensor(y)) ** 2).mean()).backward()
        opt.step()
    ours = shallow_relu.gradient_descent(W1, a, X, y, lr=lr, steps=steps, kind=kind)
    return float(max(np.abs(t1.detach().numpy() - ours.W1).max(), np.abs(ta.detach().numpy() - ours.W2).max()))
