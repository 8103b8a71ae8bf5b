"""markovlib: the package behind the book *Where training ends*, in subpackages that mirror the book's parts.

- :mod:`markovlib.markov`: Part I's theory: Markov chains, the canonical low-rank model, the conserved energy, gradient
  flow, the attention scalar, the free bias (numpy).
- :mod:`markovlib.transformer`: Part I's full model and its training: the single-layer transformer, initializations,
  the 2-token model, read-outs, the exact loss, the configuration, the Trainer, many runs (torch).
- :mod:`markovlib.richlazy`: Part II: the minimal model and its closed forms, wide and deep linear networks, ReLU
  networks and their activation surfaces.
- :mod:`markovlib.topology`: Part III: the neuron balances and the topology of H(c), the shallow ReLU network.
- :mod:`markovlib.beyond`: beyond the papers and the closing chapter: K-state and lag-k chains, optimizer drift of
  the conserved quantities.
- :mod:`markovlib.book`: the book's machinery: reports and verification tables, parameter checks, sweeps, figure
  style, widgets, progress bars.
- :mod:`markovlib.numerics`: shared numerics: argument checks, the Dormand-Prince step, bisection, root searches,
  finite differences.

Each name is imported from the one module that defines it (``from markovlib.markov.chain import MarkovChain``); the
subpackages gather no names from elsewhere. The command line is ``python -m markovlib {train,bench,sweep}``
(:mod:`markovlib.cli`).
"""

__version__ = "0.1.0"
