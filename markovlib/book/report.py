"""How chapters print numbers and record what they verified (the output policy of ``book/CONVENTIONS.md``).

Printing. A chapter is re-executed on other machines (other BLAS kernels, SIMD paths, thread counts) and its
text output is compared with the committed one, so a printed number carries only the digits that are stable
across machines, with a wide margin:

* :func:`fixed` rounds a closed form or a well-conditioned result to a stated number of decimals (and prints
  ``-0`` as ``0``);
* :func:`bound` prints an error or a residual as the bound it was checked against (``< 1e-10``);
* :func:`yes_no` prints the outcome of a chaotic run as what it is (``rank one: yes (top fraction > 0.99)``).

Verification. A :class:`Verification` holds one record per claim: the claim, how it was checked, the measured
value (as printed text), the tolerance, whether it passed, and whether the check is independent of markovlib
(autograd, a root search, Monte Carlo, an independent integration). :meth:`Verification.record` raises
``AssertionError`` at once when a claim fails, so a chapter stops where its claim breaks; the "What was
verified" table is generated from the records (:meth:`Verification.table`), so the table and the asserts
cannot disagree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def _finite_float(name, x) -> float:
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
    v = _finite_float("x", x)
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
    lim = _finite_float("limit", limit)
    if not math.isfinite(lim) or lim <= 0:
        raise ValueError(f"limit must be a finite real number > 0, got {limit!r}")
    v = abs(_finite_float("x", x))
    if v < lim:
        return f"< {lim:.0e}"
    return f"{v:.2e} (not < {lim:.0e})"


def within(x, limit) -> bool:
    """``|x| < limit`` (False for NaN): the test that :func:`bound` prints."""
    v = abs(_finite_float("x", x))
    return bool(v < _finite_float("limit", limit))


def yes_no(flag, because: str = "") -> str:
    """``"yes (because)"`` / ``"no (because)"``: the outcome of a chaotic run, printed as what it is."""
    word = "yes" if bool(flag) else "no"
    return f"{word} ({because})" if because else word


def fraction(k, n) -> str:
    """``"k/n"``: a count of seeds or points, printed exactly."""
    return f"{int(k)}/{int(n)}"


def z_score(estimate, truth, std_err, exact_tol: float = 1e-12) -> float:
    """|estimate - truth| in standard errors. A zero standard error (a predictor whose loss is the same on every
    sequence, e.g. the constant 1/2 when p = q) gives 0 when the estimate equals the truth to ``exact_tol``, else
    infinity (never NaN)."""
    est, tru, se = (_finite_float(n, v) for n, v in (("estimate", estimate), ("truth", truth), ("std_err", std_err)))
    if not se >= 0:
        raise ValueError(f"std_err must be a real number >= 0, got {std_err!r}")
    if se > 0:
        return abs(est - tru) / se
    return 0.0 if abs(est - tru) < exact_tol else math.inf


def wilson_interval(k, n, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n at normal quantile z (default 95 %). Vectorized."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    z = _finite_float("z", z)
    if not z > 0:
        raise ValueError(f"z must be > 0, got {z!r}")
    phat = k / n
    denom = 1 + z**2 / n
    centre = (phat + z**2 / (2 * n)) / denom
    half = z * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / denom
    lo, hi = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    lo, hi = np.where(k == 0, 0.0, lo), np.where(k == n, 1.0, hi)  # exact ends (rounding gave 1 - 1e-16)
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


@dataclass(frozen=True)
class Check:
    """One verified claim: a row of a chapter's "What was verified" table."""

    claim: str
    passed: bool
    check: str = ""
    measured: str = ""
    tolerance: str = ""
    independent: bool = False


class _Table(str):
    """The table as text (what nbval compares) that also renders as a markdown table in the book."""

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return str(self)


class Verification:
    """The record of a chapter's checks, one row per claim (see the module docstring).

        verified = Verification()
        verified.record("Lemma 7 gradient = autograd", err < 1e-10, check="torch autograd at 240 points",
                        measured=bound(err, 1e-10), tolerance="1e-10", independent=True)
        ...
        verified.table()      # the generated "What was verified" table (last cell of the chapter)
    """

    def __init__(self):
        self._rows: dict[str, Check] = {}

    def record(self, claim: str, passed, *, check: str = "", measured="", tolerance="", independent: bool = False,
               strict: bool = True) -> bool:
        """Record one claim and return whether it passed. A claim is recorded once (a second record of the same
        claim raises ValueError: one boolean per row). With ``strict`` (the default) a failed claim raises
        AssertionError naming it, after it is recorded."""
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f"claim must be a non-empty string, got {claim!r}")
        if claim in self._rows:
            raise ValueError(f"claim {claim!r} is already recorded (one record per claim)")
        ok = bool(np.all(passed))
        self._rows[claim] = Check(claim, ok, str(check), str(measured), str(tolerance), bool(independent))
        if strict and not ok:
            raise AssertionError(f"claim failed: {claim} (measured {measured}, tolerance {tolerance})")
        return ok

    def __len__(self):
        return len(self._rows)

    def __iter__(self):
        return iter(self._rows.values())

    def __getitem__(self, claim) -> Check:
        return self._rows[claim]

    @property
    def all_passed(self) -> bool:
        return all(r.passed for r in self._rows.values())

    def summary(self) -> dict:
        """Counts for :func:`markovlib.book.sweep.record_results`: checks, passed, independent."""
        rows = list(self._rows.values())
        return {"checks": len(rows), "checks_passed": sum(r.passed for r in rows),
                "checks_independent": sum(r.independent for r in rows)}

    def table(self) -> _Table:
        """The generated table (markdown; also its plain text) after asserting that every claim passed."""
        if not self._rows:
            raise ValueError("no claims were recorded")
        failed = [r.claim for r in self._rows.values() if not r.passed]
        if failed:
            raise AssertionError(f"claims failed: {failed}")
        header = "| claim | check | measured | tolerance | independent of markovlib | result |"
        lines = [header, "|---|---|---|---|---|---|"]
        for r in self._rows.values():
            cells = [r.claim, r.check, r.measured, r.tolerance, "yes" if r.independent else "no",
                     "PASS" if r.passed else "FAIL"]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        text = _Table("\n".join(lines))
        text.markdown = str(text)
        return text
