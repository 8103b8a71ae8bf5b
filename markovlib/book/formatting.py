"""How chapters print numbers (the output policy of ``book/CONVENTIONS.md``).

A chapter is re-executed on other machines and its text output compared with the committed one, so a printed
number carries only the digits stable across machines: :func:`fixed` (a stated number of decimals, never ``-0``),
:func:`bound` (an error as the bound it was checked against, ``< 1e-10``), :func:`yes_no` (the outcome of a chaotic
run), :func:`fraction` (a count), :func:`wilson_digits` (an interval's ends).
"""
from __future__ import annotations

import math


def as_float(name, x) -> float:
    """``float(x)``, or ValueError naming ``name`` when ``x`` is not a real number (NaN and inf pass)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {x!r}") from None
    return v


def fixed(x, decimals: int = 4) -> str:
    """``x`` rounded to ``decimals`` decimals, with a rounded zero printed without its sign (``-0.0000`` would
    depend on the last bits of a value that is zero in exact arithmetic). NaN prints as ``nan``."""
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be an integer >= 0, got {decimals!r}")
    v = as_float("x", x)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{decimals}f}"
    if float(text) == 0.0:
        text = f"{0.0:.{decimals}f}"
    return text


def bound(x, limit) -> str:
    """An error or residual printed as the bound it satisfies: ``"< 1e-10"`` when ``|x| < limit``.

    When ``|x| >= limit`` (the check will fail) the value itself is printed with the bound it broke, so that a
    failing run shows what happened. ``limit`` must be a positive real number; NaN never satisfies a bound."""
    lim = as_float("limit", limit)
    if not math.isfinite(lim) or lim <= 0:
        raise ValueError(f"limit must be a finite real number > 0, got {limit!r}")
    v = abs(as_float("x", x))
    if v < lim:
        return f"< {lim:.0e}"
    return f"{v:.2e} (not < {lim:.0e})"


def ladder_limit(x, margin: float = 1.5, floor: float = 0.0) -> float:
    """The smallest one-digit limit (1, 2, 3, 5 or 7 times a power of ten) at least ``margin * |x|`` and ``floor``.

    For :func:`bound` when no fixed limit 100x below the tolerance fits the measurement: the printed bound then
    follows the measured value upward (never rounded down) and moves only when the value changes by ``margin``."""
    m = as_float("margin", margin)
    if not m >= 1:
        raise ValueError(f"margin must be a real number >= 1, got {margin!r}")
    fl = as_float("floor", floor)
    if not fl >= 0:
        raise ValueError(f"floor must be a real number >= 0, got {floor!r}")
    target = max(m * abs(as_float("x", x)), fl, 1e-300)
    e = math.floor(math.log10(target))
    for k in (e - 1, e, e + 1):
        for d in (1, 2, 3, 5, 7):
            v = float(f"{d}e{k}")
            if v >= target:
                return v
    raise AssertionError("unreachable")


def within(x, limit) -> bool:
    """``|x| < limit`` (False for NaN): the test that :func:`bound` prints."""
    v = abs(as_float("x", x))
    return bool(v < as_float("limit", limit))


def yes_no(flag, because: str = "") -> str:
    """``"yes (because)"`` / ``"no (because)"``: the outcome of a chaotic run, printed as what it is."""
    word = "yes" if bool(flag) else "no"
    return f"{word} ({because})" if because else word


def fraction(k, n) -> str:
    """``"k/n"``: a count of seeds or points, printed exactly."""
    return f"{int(k)}/{int(n)}"


def wilson_digits(lo: float, hi: float, rate: float | None = None) -> tuple[str, str]:
    """The interval's ends printed with enough decimals that a lower end which fails ``rate`` never prints as
    ``rate`` (0.9497 against 0.95 prints 0.9497): two decimals, more only where needed (at most six)."""
    for digits in range(2, 7):
        if rate is None or (f"{lo:.{digits}f}" != f"{rate:.{digits}f}" and
                            (float(f"{lo:.{digits}f}") > rate) == (lo > rate)):
            break
    return f"{lo:.{digits}f}", f"{hi:.{digits}f}"
