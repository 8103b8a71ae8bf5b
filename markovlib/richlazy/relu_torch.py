"""The torch backend of :func:`markovlib.richlazy.relu_batch.train_networks`: the GD steps of a block of two-layer
ReLU networks in torch, on the CPU or on CUDA, in float64 or float32.

:class:`TorchBlock` is the stepping half of ``relu_batch._Block``: the same stacking (readouts ``a`` (Sb, Gb, h),
first layers stored transposed ``Wt`` (Sb, d, Gb * h), so that X @ Wt is every pre-activation of the block at
once) and the same step, a <- a - lr eta_a dL/da, W <- W - lr eta_w dL/dW with L = (1/n) sum_i (f(x_i) - y_i)^2,
dL/da = (2/n) sigma(Z)^T r and dL/dW^T = (2/n) (X^T (r sigma'(Z))) a. Only the order of the sums inside the
products differs from numpy, so float64 runs agree with the numpy backend to rounding (tested). The checkpoint
metrics are not computed here: train_networks reads the weights back (:meth:`TorchBlock.weights`, float64 numpy)
and evaluates them in float64 numpy. No random numbers are drawn (the initialization comes in as arrays), so the
global torch generator is untouched; the CPU thread count is torch's own (the caller sets it).
"""
from __future__ import annotations

import numpy as np
import torch

# elements in one (n, block * h) array of a block by default: on the CPU the numpy backend's cache-sized blocks,
# on CUDA large blocks (2**25 elements: 256 MiB in float64 per array, a few such arrays) to fill the device
ARRAY = {"cpu": 2**17, "cuda": 2**25}


def resolve_device(device) -> str:
    """None -> "cuda" when torch sees CUDA, else "cpu"; "cuda" without CUDA is a ValueError."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' needs CUDA, which torch does not see here (use device=None or 'cpu')")
    return device


class TorchBlock:
    """The networks of seeds ``X`` (Sb, n, d) times grid points: ``a0`` (Sb, Gb, h), ``W0`` (Sb, Gb, h, d),
    ``lr`` (Sb, Gb), as numpy float64 arrays; ``dtype`` "float64" or "float32", ``device`` "cpu" or "cuda"
    (validated by train_networks)."""

    def __init__(self, X, y, a0, W0, lr, gamma, eta_a, eta_w, dtype, device):
        self.Sb, self.Gb, self.h = a0.shape
        self.n, self.d = X.shape[1:]
        dt = {"float64": torch.float64, "float32": torch.float32}[dtype]

        def tensor(x):   # a copy: the steps work in place, and the caller's arrays stay as they are
            return torch.tensor(np.ascontiguousarray(x), dtype=dt, device=device)

        self.g, self.c = gamma, 2.0 / self.n
        self.X = tensor(X)
        self.XT = self.X.transpose(1, 2).contiguous()
        self.y = tensor(y).unsqueeze(-1)                               # (Sb, n, 1) against (Sb, n, Gb)
        self.a = tensor(a0)
        self.Wt = tensor(W0.transpose(0, 3, 1, 2).reshape(self.Sb, self.d, self.Gb * self.h))
        self.la = tensor((lr * eta_a)[..., None])                      # (Sb, Gb, 1), as relu_networks: lr * eta_a
        self.lw = tensor((lr * eta_w)[:, None, :, None])               # (Sb, 1, Gb, 1) against Wt as (Sb, d, Gb, h)
        shape = (self.Sb, self.n, self.Gb * self.h)
        self.Z = torch.empty(shape, dtype=dt, device=device)          # pre-activations, then activations
        self.B = torch.empty(shape, dtype=dt, device=device)           # slopes sigma'(z), then r sigma'(z)
        self.gWt = torch.empty_like(self.Wt)

    def _4(self, M):
        """(Sb, rows, Gb * h) -> (Sb, rows, Gb, h) view."""
        return M.view(M.shape[0], M.shape[1], self.Gb, self.h)

    def step(self):
        """One GD step, as relu_batch._Block.step computes it."""
        Z, B, c = self.Z, self.B, self.c
        torch.matmul(self.X, self.Wt, out=Z)
        if self.g == 0:
            Z.relu_()
            torch.sign(Z, out=B)                                       # sigma'(z): 1 above 0, 0 below
        else:
            B.fill_(self.g).masked_fill_(Z > 0, 1.0)
            torch.maximum(Z, self.g * Z, out=Z)
        Z4 = self._4(Z)
        r = torch.einsum("sngh,sgh->sng", Z4, self.a) - self.y         # residuals f - y, (Sb, n, Gb)
        ga = torch.einsum("sngh,sng->sgh", Z4, r).mul_(c)              # dL/da
        self._4(B).mul_(r.unsqueeze(-1))                               # r_i sigma'(z_ik)
        torch.matmul(self.XT, B, out=self.gWt)
        gW4 = self.gWt.view(self.Sb, self.d, self.Gb, self.h)
        gW4.mul_(self.a.unsqueeze(1) * c)                              # ... times a_k, times 2/n: dL/dW^T
        self.a.sub_(self.la * ga)
        self.Wt.view(gW4.shape).sub_(self.lw * gW4)

    def run(self, steps: int):
        """``steps`` GD steps (returns when the device has finished them)."""
        with torch.inference_mode():
            for _ in range(steps):
                self.step()
        if self.X.device.type == "cuda":
            torch.cuda.synchronize(self.X.device)

    def weights(self):
        """The current ``a`` (Sb, Gb, h) and ``Wt`` (Sb, d, Gb * h) as float64 numpy arrays."""
        return (self.a.to("cpu", torch.float64).numpy().copy(), self.Wt.to("cpu", torch.float64).numpy().copy())
