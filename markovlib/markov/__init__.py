"""Part I, the theory (Makkuva et al., *Local to Global*): Markov chains and the canonical low-rank model, in numpy.

- ``chain``: Markov sources (binary and K-state), the entropy rate and H(pi), vectorized samplers.
- ``canonical``: the canonical model c(e, w, a): optimal bias, loss, gradients, Hessians, critical sets (Thm 1).
- ``energy``: the conserved energy E(e, w) and the limits it predicts (Thms 2, 8).
- ``flow``: gradient flow (solve_ivp, a batched Dormand-Prince integrator) and gradient descent.
- ``attention``: the attention scalar in 3-D: Hessians, the planar invariant, the separatrix, the basin rule.
- ``bias_flow``: gradient flow with the bias as a free parameter.
- ``drawings``: the critical points and the explorers of Part I, headless (matplotlib imported lazily).
- ``checks``: the chapters' statistics (exact binomial tests of the sampler, perturbation discs and balls, the
  critical set of a root, the bias minimized numerically).
- ``reference``: independent references in torch (the canonical loss re-derived, with and without the attention
  scalar; the full model's loss through ``functional_call``), which share no code with ``canonical``.
- ``invariant``: the checks of the attention flow's second invariant along integrated flows.
"""
