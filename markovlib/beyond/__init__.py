"""Beyond the papers, and the closing chapter.

- ``multistate``: the symmetric K-state and lag-k chains, their yardsticks, the plateau ladder, a K-state training loop.
- ``conservation``: GD, SGD, Adam and weight decay on a numpy loss, recording a conserved quantity along the run.
"""
