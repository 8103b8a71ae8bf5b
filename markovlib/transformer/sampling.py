"""The batch sampler of a training run (reference Sec. 2: sequences of a binary Markov chain, x_0 ~ pi):
:func:`sample_batch` draws on torch's CPU generator and moves the batch to the device, so a run sees the same data
on every device.
"""
from __future__ import annotations

import torch

from ..markov.chain import MarkovChain


def sample_batch(chain: MarkovChain, batch, length, seed, device) -> torch.Tensor:
    """``chain.sample(..., seed=seed, backend="torch")`` drawn with torch's CPU generator and moved to ``device``:
    the data of a run do not depend on the device (CUDA's generator gives other numbers for the same seed, and
    MPS lacks the sampler's float64), so a run on a GPU sees exactly the batches of the same run on a CPU."""
    x = chain.sample(batch, length, seed=seed, backend="torch")
    return x if torch.device(device).type == "cpu" else x.to(device)
