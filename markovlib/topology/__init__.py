"""Part III (Nurisso et al., *Topological obstruction*): the neuron balances c_k and the topology of H(c), in numpy.

- ``invariant_set``: the balances, the Betti numbers and components of H(c), pathological neurons, the rescaling onto
  a quadric, the obstruction probability of App. F.
- ``drawings``: the headless drawings of Part III's explorers (the topology of H(c) and the quadrics with a
  trajectory; App. F's obstruction probability).
- ``balance_drift``: the fixed-step RK4 flow and the GD/SGD/Adam runs that keep or break the balances (Sec. 8).
- ``shallow_relu``: the network f(x) = W2 relu(W1 x), its MSE and BCE losses, batched gradient descent.
"""
