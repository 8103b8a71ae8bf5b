"""Validation of a chapter's papermill parameters, called once in the chapter's first code cell.

Papermill's ``-y``/``-f`` pass YAML, so a pair arrives as a list (``[0.5, 0.8]``) and a list of pairs as a list of
lists, while ``-p name '[[0.8, 0.75], [0.2, 0.15]]'`` passes the text itself; these functions accept tuples,
lists and such text (parsed as YAML) and return tuples. Every bad value
raises ``ValueError`` naming the parameter and the allowed range, before any work starts.

    p = params.probability("p", p)
    pq_pairs = params.chains("pq_pairs", pq_pairs, margin=0.1)   # list of (p, q), |p + q - 1| >= margin
    seeds = params.positive_int("seeds", seeds)
"""
from __future__ import annotations

import math
import numbers

from ..numerics import checks

probability = checks.probability
positive_int = checks.positive_int
nonnegative_int = checks.nonnegative_int
positive_real = checks.positive_real
choice = checks.choice


def real(name: str, value, lo=-math.inf, hi=math.inf, *, closed=True) -> float:
    """A finite real number in [lo, hi] (or (lo, hi) with ``closed=False``)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    inside = (lo <= x <= hi) if closed else (lo < x < hi)
    if not math.isfinite(x) or not inside:
        brackets = "[]" if closed else "()"
        raise ValueError(f"{name} must be a finite real number in {brackets[0]}{lo}, {hi}{brackets[1]}, got {value!r}")
    return x


def _sequence(name, value):
    if isinstance(value, str):  # `papermill -p name '[...]'` passes the text
        import yaml

        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"{name} must be a list, got the text {value!r}") from None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a list, got {value!r}")
    items = list(value)
    if not items:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return items


def real_list(name: str, value, lo=-math.inf, hi=math.inf, *, closed=True) -> list[float]:
    """A non-empty list of finite reals in [lo, hi]."""
    return [real(f"{name}[{i}]", v, lo, hi, closed=closed) for i, v in enumerate(_sequence(name, value))]


def int_list(name: str, value, minimum: int = 0) -> list[int]:
    """A non-empty list of integers >= ``minimum``."""
    out = []
    for i, v in enumerate(_sequence(name, value)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < minimum:
            raise ValueError(f"{name}[{i}] must be an integer >= {minimum}, got {v!r}")
        out.append(int(v))
    return out


def pair(name: str, value, lo=-math.inf, hi=math.inf, *, closed=True) -> tuple[float, float]:
    """Two finite reals in [lo, hi], from a tuple or a list (papermill's YAML gives lists)."""
    items = _sequence(name, value)
    if len(items) != 2:
        raise ValueError(f"{name} must be a pair of numbers, got {value!r}")
    return tuple(real(f"{name}[{i}]", v, lo, hi, closed=closed) for i, v in enumerate(items))


def pair_list(name: str, value, lo=-math.inf, hi=math.inf, *, closed=True) -> list[tuple[float, float]]:
    """A non-empty list of pairs (see :func:`pair`)."""
    return [pair(f"{name}[{i}]", v, lo, hi, closed=closed) for i, v in enumerate(_sequence(name, value))]


# Part I's theory holds for every chain with p, q in (0, 1); the chapters state and check it on this range (edge
# cases get numerical care rather than a narrower range), away from p + q = 1 by a margin each chapter states.
THEORY_RANGE = (0.02, 0.98)


def chain(name: str, value, margin: float = 0.0, within: tuple[float, float] | None = None) -> tuple[float, float]:
    """A chain (p, q) with p, q in (0, 1) (in [lo, hi] when ``within=(lo, hi)``, e.g. :data:`THEORY_RANGE`) and, when
    ``margin > 0``, |p + q - 1| >= margin: the claims of Part I depend on the side of the line p + q = 1 and hold
    away from it by a stated margin."""
    if within is None:
        p, q = pair(name, value, 0.0, 1.0, closed=False)
    else:
        lo, hi = within
        p, q = pair(name, value, lo, hi)
    if margin > 0 and abs(p + q - 1) < margin - 1e-12:
        raise ValueError(f"{name} = {value!r} must satisfy |p + q - 1| >= {margin} (the chapter's claims are "
                         f"stated away from the i.i.d. line p + q = 1)")
    return p, q


def chains(name: str, value, margin: float = 0.0,
           within: tuple[float, float] | None = None) -> list[tuple[float, float]]:
    """A non-empty list of chains (see :func:`chain`)."""
    return [chain(f"{name}[{i}]", v, margin, within) for i, v in enumerate(_sequence(name, value))]
