"""Part II (Kunin et al., *Get rich quick*): rich and lazy learning and the conserved delta, in numpy.

- ``minimal_model``: the minimal model a w^T x: delta, the flow, the reduced (mu, phi) system, NTK, kernel distance, M.
- ``minimal_exact``: its closed-form solutions (App. A.2) and the implicit bias of Thm 3.1.
- ``minimal_limits``: where its flow ends for any data, through a zero crossing of a too (Thm 3.1, App. A.4.4).
- ``minimal_crossing``: random problems for the zero crossings of a, the package's predictions on them, the kernel
  dynamics' data (App. A.3.1, A.4.4).
- ``minimal_regimes``: the regimes of the whitened neuron in closed form (Fig. 3: S(0, t), its end value, the
  statistics and scans of the book's range; the distance to the saddle from the separating surface, App. A.2.5).
- ``drawings``: the minimal model's explorer, headless (trajectory on its hyperboloid, mu, phi, S(0, t)).
- ``linear_networks``: wide and deep linear networks (Sec. 4, Thms 4.1, 4.2).
- ``linear_checks``: the wide-network chapter's relative error and its parameter converters (shapes, isotropic cases).
- ``linear_lazy``: the lazy limits of wide linear networks (Thm B.1): the delta sweep, its kernels and tail exponents.
- ``linear_regimes``: the narrowing / expanding regimes (Sec. 4, App. B.1.5), time to fit, App. B.1.1's Riccati
  form and App. B.1.4's h = d = c = 1 closed form.
- ``relu_networks``: two-layer piecewise-linear networks (Sec. 5): data, the (tau, alpha) init, training, NTK.
- ``relu_dynamics``: the signed spherical coordinates of each neuron's beta_k and the regimes (Sec. 5, App. C.2).
- ``relu_batch``: many such networks (grids x seeds) trained as one computation, with Fig. 1b / 5b's metrics.
- ``relu_grid``: the authors' Fig. 1b / 5b settings, the grid and size-study runs, ``bench relu-grid``.
- ``relu_surface``: deep ReLU networks' activation regions and local affine maps (App. C.1, Fig. 9).
"""
