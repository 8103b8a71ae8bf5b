"""Part III (Nurisso et al., *Topological obstruction*): the neuron balances c_k and the topology of H(c), in numpy.

- ``invariant_set``: the balances, the Betti numbers and components of H(c), pathological neurons, the rescaling onto
  a quadric, the obstruction probability of App. F.
- ``drawings``: the headless drawings of Part III's explorers (the topology of H(c) and the quadrics with a
  trajectory; App. F's obstruction probability).
- ``balance_drift``: the fixed-step RK4 flow and the GD/SGD/Adam runs that keep or break the balances (Sec. 8).
- ``toy``: the Sec. 6 toy (Fig. 3): its data, draws, runs and the rounding slack of its bound.
- ``homology``: point samples of H(c), Rips and alpha persistence, neighbour-graph components (Thm 1, Cor. 1, App. E).
- ``components``: the Prop. 3 teacher and the enumeration of the symmetries behind Thm 2 / Cor. 3.
- ``breast_cancer``: the breast-cancer study of Sec. 6 / Fig. 4 (split, floor, paired draws, runs, statistics).
- ``appendix``: App. E's network with biases, App. F's log survival, App. G's population loss and flow.
- ``shallow_relu``: the network f(x) = W2 relu(W1 x), its MSE and BCE losses, batched gradient descent.
- The chapters' steps, one call each: ``bias_checks``, ``width_checks``, ``outputs_checks`` (App. E, F, G),
  ``homology_checks`` (Thm 1, Cor. 1, Lemmas 2-3, Prop. 3), ``breast_cancer_checks`` (Sec. 6, Fig. 4), ``toy_checks``
  (the Sec. 6 toy), ``torch_reference`` (independent torch references); their figures: ``remarks_drawings``,
  ``homology_drawings``, ``breast_cancer_drawings``, ``obstruction_drawings``.
"""
