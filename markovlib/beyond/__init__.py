"""Beyond the papers, and the closing chapter.

- ``multistate``: the symmetric K-state and lag-k chains, their yardsticks, the plateau ladder, the samplers.
- ``kstate_training``: the K-state inits and training loop (Adam or plain SGD, tied or untied head).
- ``conservation``: GD, SGD, Adam and weight decay on a numpy loss, recording a conserved quantity along the run.
"""
