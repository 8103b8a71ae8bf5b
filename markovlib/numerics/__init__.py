"""Shared numerics, below everything else (unchecked kernels; callers validate their arguments).

- ``checks``: argument validation (one ``ValueError`` naming the argument and its range).
- ``dopri``: the Dormand-Prince 5(4) step for many initial values; ``bisection``: vectorized bisection.
- ``roots``: multi-start root searches; ``numdiff``: finite differences (independent checks for the chapters).
- ``survival``: the Kaplan-Meier estimate with Greenwood's log-log interval (escape times censored at a horizon).
"""
