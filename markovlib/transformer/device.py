"""Where a run computes and how it seeds its draws (reference Sec. 7): :func:`pick_device` (CUDA, then Apple MPS,
then CPU) and :func:`batch_seed`, the seed of the draw of a step from numpy's SeedSequence([seed, stream, step]),
so the data of step k do not depend on how the run got there (exact resume). The streams: training
(:data:`TRAIN_STREAM`), evaluation (:data:`EVAL_STREAM`) and initialization (:data:`INIT_STREAM`).
"""
from __future__ import annotations

import numpy as np
import torch

from ..numerics import checks

# streams of :func:`batch_seed`
TRAIN_STREAM, EVAL_STREAM, INIT_STREAM = 0, 1, 2


def pick_device(device=None) -> torch.device:
    """The training device: ``None`` or ``"auto"`` picks CUDA, then Apple MPS, then CPU; otherwise ``device``
    (``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` or a torch.device), which must be available."""
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}") from None
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    if dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError(f"device {device!r} requested but Apple MPS is not available")
    return dev


def batch_seed(seed, step, stream=TRAIN_STREAM) -> int:
    """The seed of the batch drawn at ``step`` of a run with base ``seed``: a 63-bit integer from numpy's
    SeedSequence([seed, stream, step]), so training (stream 0), evaluation (1) and initialization (2) draws
    never share a seed, and the data of step k does not depend on how the run got to step k (exact resume)."""
    seed = checks.nonnegative_int("seed", seed)
    step = checks.nonnegative_int("step", step)
    state = np.random.SeedSequence([seed, int(stream), step]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))  # < 2**63
