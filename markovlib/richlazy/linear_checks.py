"""Part II: the checks of the wide and deep linear networks chapter (grq_wide_deep; Kunin et al., NeurIPS 2024,
Sec. 4, App. B): the relative error the chapter prints as a bound, and the converters that validate its papermill
parameters of network shapes (d, h, c) and isotropic cases (d, h, c, delta) (a list arrives as a list, a list of
lists from papermill's YAML, or the text of one from ``papermill -p``), for ``markovlib.book.params.Rule``."""
from __future__ import annotations

import numbers

import numpy as np
import yaml


def relative_error(x, ref) -> float:
    """max |x - ref| / max(1, max |ref|): a relative error that stays an absolute one for small references."""
    x, ref = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    if x.shape != ref.shape:
        raise ValueError(f"x and ref must have one shape, got {x.shape} and {ref.shape}")
    return float(np.max(np.abs(x - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def _rows(name, value):
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"{name} must be a list, got the text {value!r}") from None
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return list(value)


def _int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or v != int(v) or v < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    return int(v)


def dims(name, value) -> list[int]:
    """A network shape [d, h, c]: three integers >= 1."""
    row = _rows(name, value)
    if len(row) != 3:
        raise ValueError(f"{name} must hold 3 integers (d, h, c), got {value!r}")
    return [_int(f"{name}[{i}]", v) for i, v in enumerate(row)]


def dims_list(name, value) -> list[list[int]]:
    """A non-empty list of network shapes (see :func:`dims`)."""
    return [dims(f"{name}[{i}]", r) for i, r in enumerate(_rows(name, value))]


def iso_case(name, value) -> tuple[int, int, int, float]:
    """An isotropic case (d, h, c, delta): three integers >= 1 and a finite real."""
    row = _rows(name, value)
    if len(row) != 4:
        raise ValueError(f"{name} must be (d, h, c, delta), got {value!r}")
    d, h, c = (_int(f"{name}[{i}]", v) for i, v in enumerate(row[:3]))
    if isinstance(row[3], bool) or not isinstance(row[3], numbers.Real) or not np.isfinite(row[3]):
        raise ValueError(f"{name}[3] (delta) must be a finite real number, got {row[3]!r}")
    return d, h, c, float(row[3])


def iso_case_list(name, value) -> list[tuple[int, int, int, float]]:
    """A non-empty list of isotropic cases (see :func:`iso_case`)."""
    return [iso_case(f"{name}[{i}]", r) for i, r in enumerate(_rows(name, value))]


def thm_4_2_applies(d, h, c, delta) -> bool:
    """Whether Thm 4.2 covers (d, h, c, delta): h = d when delta < 0, h = c when delta > 0 (and h <= c at delta = 0,
    for the construction of :func:`markovlib.richlazy.linear_networks.isotropic_init`)."""
    return not ((delta < 0 and h != d) or (delta > 0 and h != c) or (delta == 0 and h > c))
