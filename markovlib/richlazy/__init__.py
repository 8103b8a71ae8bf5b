"""Part II (Kunin et al., *Get rich quick*): rich and lazy learning and the conserved delta, in numpy.

- ``minimal_model``: the minimal model a w^T x: delta, the flow, the reduced (mu, phi) system, NTK, kernel distance, M.
- ``minimal_exact``: its closed-form solutions (App. A.2) and the implicit bias of Thm 3.1.
- ``minimal_limits``: where its flow ends for any data, through a zero crossing of a too (Thm 3.1, App. A.4.4).
- ``linear_networks``: wide and deep linear networks (Sec. 4, Thms 4.1, 4.2).
- ``relu_networks``: two-layer piecewise-linear networks (Sec. 5): data, the (tau, alpha) init, training, NTK.
- ``relu_surface``: deep ReLU networks' activation regions and local affine maps (App. C.1, Fig. 9).
"""
