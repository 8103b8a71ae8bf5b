"""How chapters print numbers and record what they verified (the output policy of ``book/CONVENTIONS.md``).

Printing: a chapter is re-executed on other machines and its text output compared with the committed one, so a
printed number carries only the digits stable across machines: :func:`fixed` (a stated number of decimals, never
``-0``), :func:`bound` (an error as the bound it was checked against, ``< 1e-10``), :func:`yes_no` (the outcome of
a chaotic run). Verification: a :class:`Verification` holds one record per claim (claim, check, kind of evidence
(:data:`KINDS`), measurement, tolerance, result); :meth:`Verification.record` raises ``AssertionError`` when a claim
fails and ``ValueError`` when a row would print no measurement; :meth:`Verification.record_count` records a claim
over seeds as a count with its Wilson interval against a rate fixed beforehand; the "What was verified" table is
generated from the records (:meth:`Verification.table`). :func:`glue` hands a statistic to the prose.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np


MIN_LIVE = 10  # the fewest cases of a count over live runs or draws (the developers' guide)
MIN_STORED = 20  # the fewest cases of a count read from stored paper-scale runs


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


def ladder_limit(x, margin: float = 1.5, floor: float = 0.0) -> float:
    """The smallest one-digit limit (1, 2, 3, 5 or 7 times a power of ten) at least ``margin * |x|`` and ``floor``.

    For :func:`bound` when no fixed limit 100x below the tolerance fits the measurement: the printed bound then
    follows the measured value upward (never rounded down) and moves only when the value changes by ``margin``."""
    m = _finite_float("margin", margin)
    if not m >= 1:
        raise ValueError(f"margin must be a real number >= 1, got {margin!r}")
    fl = _finite_float("floor", floor)
    if not fl >= 0:
        raise ValueError(f"floor must be a real number >= 0, got {floor!r}")
    target = max(m * abs(_finite_float("x", x)), fl, 1e-300)
    e = math.floor(math.log10(target))
    for k in (e - 1, e, e + 1):
        for d in (1, 2, 3, 5, 7):
            v = float(f"{d}e{k}")
            if v >= target:
                return v
    raise AssertionError("unreachable")


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


@dataclass(frozen=True)
class MeanTest:
    """A sampled mean against its predicted value: the mean, its standard error, |z| and the two-sided p-value."""
    mean: float
    std_err: float
    z: float
    pvalue: float


def mean_test(samples, truth, *, se_floor: float = 1e-13) -> MeanTest:
    """Test a Monte Carlo mean of independent ``samples`` (one per sequence) against ``truth``: the standard error
    is estimated (``std(ddof=1) / sqrt(n)``), so the p-value is Student t's with n - 1 degrees of freedom; it is
    floored at ``se_floor`` (the rounding level of a float64 mean of O(1) values), since a predictor whose loss is
    the same on every sequence (1/2 when p = q) has a standard error of rounding size."""
    from scipy.stats import t as student_t
    x = np.asarray(samples, dtype=float).ravel()
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples must hold at least 2 finite values, got {x.size} values")
    tru = _finite_float("truth", truth)
    floor = _finite_float("se_floor", se_floor)
    if not floor > 0:
        raise ValueError(f"se_floor must be > 0, got {se_floor!r}")
    mean = float(x.mean())
    se = max(float(x.std(ddof=1)) / math.sqrt(x.size), floor)
    z = abs(mean - tru) / se
    return MeanTest(mean, se, z, float(2 * student_t.sf(z, x.size - 1)))


def wilson_digits(lo: float, hi: float, rate: float | None = None) -> tuple[str, str]:
    """The interval's ends printed with enough decimals that a lower end which fails ``rate`` never prints as
    ``rate`` (0.9497 against 0.95 prints 0.9497): two decimals, more only where needed (at most six)."""
    for digits in range(2, 7):
        if rate is None or (f"{lo:.{digits}f}" != f"{rate:.{digits}f}" and
                            (float(f"{lo:.{digits}f}") > rate) == (lo > rate)):
            break
    return f"{lo:.{digits}f}", f"{hi:.{digits}f}"


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


def wilson_lower_z(alpha: float = 0.05, family: int = 1) -> float:
    """The normal quantile of a one-sided lower confidence bound at level 1 - alpha / family (Bonferroni over
    ``family`` claims tested at once, so the family-wise error is at most ``alpha``)."""
    from scipy.stats import norm

    alpha = _finite_float("alpha", alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(family, bool) or not isinstance(family, int) or family < 1:
        raise ValueError(f"family must be an integer >= 1, got {family!r}")
    return float(norm.ppf(1 - alpha / family))


def glue(name: str, value) -> str:
    """Glue ``value`` (printed text, or a number printed with ``str``) under ``name`` for the prose: a markdown cell
    writes ``{glue:text}`name``` and the book shows the computed value, so no sentence can disagree with the run.
    Returns the text. Needs myst-nb (the book's notebook reader); outside a kernel it only returns the text."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be an identifier, got {name!r}")
    text = str(value)
    from myst_nb import glue as _glue

    _glue(name, text, display=False)
    return text


# What kind of evidence a check is (issue 21). Identities document, they do not verify: summary() leaves them out.
KINDS = {
    "independent": "the same quantity by a route that calls no markovlib function under test",
    "same code": "a consistency check through markovlib",
    "identity": "true by construction or by algebra (documents, does not verify)",
    "stored data": "read from committed paper-scale runs",
}
_BARE = {"yes", "no", "true", "false", "pass", "ok", "holds", "passed"}
_THRESHOLD = re.compile(r"^\s*(>=|≥|<=|≤|at least|at most|fewer than|more than)|lower (end|bound) (>=|≥)", re.I)
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?", re.I)


def _numbers(text: str) -> list[float]:
    return [float(m.group(0)) for m in _NUMBER.finditer(text)]


def check_measured(measured: str, tolerance: str = "", categorical: bool = False) -> None:
    """Raise ValueError unless ``measured`` prints a measurement: a number (a count, a ratio, an error bound tighter
    than the tolerance), never a bare yes/no and never the threshold itself. A categorical claim ("global_min") may
    print its outcome by name instead of a number."""
    m, tol = str(measured).strip(), str(tolerance).strip()
    if not m:
        raise ValueError("measured is empty: print what was measured")
    words = re.split(r"[\s(]", m.lower(), maxsplit=1)
    if words[0] in _BARE:
        raise ValueError(f"measured {m!r} is a bare yes/no: print what was measured")
    if _THRESHOLD.search(m):
        raise ValueError(f"measured {m!r} states a threshold: print what was measured")
    if not categorical and not re.search(r"\d", m):
        raise ValueError(f"measured {m!r} has no number (pass categorical=True for a named outcome)")
    if tol and (m == tol or (m.startswith("<") and _numbers(m)[:1] == _numbers(tol)[:1] and _numbers(tol))):
        raise ValueError(f"measured {m!r} repeats the tolerance {tol!r}: print the measurement (a tighter bound)")


@dataclass(frozen=True)
class Check:
    """One verified claim: a row of a chapter's "What was verified" table."""

    claim: str
    passed: bool
    check: str = ""
    measured: str = ""
    tolerance: str = ""
    kind: str = "same code"


class _Table(str):
    """The table as text (what nbval compares) that also renders as a markdown table in the book."""

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return str(self)


TABLE_HEADER = "| claim | check | kind | measured | tolerance | result |"


class Verification:
    """The record of a chapter's checks, one row per claim (see the module docstring).

        verified = Verification()
        verified.record("Lemma 7 gradient = autograd", err < 1e-10, check="torch autograd at 240 points",
                        measured=bound(err, 1e-13), tolerance="1e-10", kind="independent")
        verified.record_count("Thm 2: trained runs reach the bigram loss", k, n, rate=0.5, check="20 seeds",
                              kind="independent")
        ...
        verified.table()      # the generated "What was verified" table (last cell of the chapter)
    """

    def __init__(self):
        self._rows: dict[str, Check] = {}

    def record(self, claim: str, passed, *, check: str, measured, tolerance="", kind: str,
               categorical: bool = False, strict: bool = True) -> bool:
        """Record one claim and return whether it passed. ``kind`` is one of :data:`KINDS`; ``measured`` passes
        :func:`check_measured`. A claim is recorded once (a second record of the same claim raises ValueError: one
        boolean per row). With ``strict`` (the default) a failed claim raises AssertionError naming it, after it is
        recorded."""
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f"claim must be a non-empty string, got {claim!r}")
        if claim in self._rows:
            raise ValueError(f"claim {claim!r} is already recorded (one record per claim)")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        check_measured(measured, tolerance, categorical)
        ok = bool(np.all(passed))
        self._rows[claim] = Check(claim, ok, str(check), str(measured), str(tolerance), kind)
        if strict and not ok:
            raise AssertionError(f"claim failed: {claim} (measured {measured}, tolerance {tolerance})")
        return ok

    def record_count(self, claim: str, k, n, *, rate: float, check: str, kind: str, unit: str = "seeds",
                     alpha: float = 0.05, family: int = 1, strict: bool = True, min_n: int | None = None) -> bool:
        """Record "the event happens in more than a fraction ``rate`` of cases" from k successes in n: it holds when
        the one-sided Wilson lower bound at level 1 - alpha/family exceeds ``rate`` (fixed beforehand, at least 1/2;
        ``family`` > 1 when the same claim is tested in that many cells: Bonferroni). The row prints ``k/n unit``
        with the two-sided 1 - 2 alpha/family interval, whose lower end is that bound. A count needs at least
        ``min_n`` cases (default: 20 for stored data, 10 for live runs; a unanimous 3/3 would otherwise pass a rate
        of 1/2): fewer raise ``ValueError``, so a chapter cannot claim a rate from a handful of seeds."""
        k, n = int(k), int(n)
        if min_n is None:
            min_n = MIN_STORED if kind == "stored data" else MIN_LIVE
        if n < min_n:
            raise ValueError(f"{claim!r}: a count over n = {n} {unit} is too small; at least {min_n} are needed "
                             f"({'stored' if kind == 'stored data' else 'live'} runs)")
        rate = _finite_float("rate", rate)
        if not 0.5 <= rate < 1:
            raise ValueError(f"rate must be in [0.5, 1) (a claim that holds more often than not), got {rate!r}")
        z = wilson_lower_z(alpha, family)
        lo, hi = wilson_interval(k, n, z)  # the two-sided 1 - 2 alpha/family interval: its lower end is one-sided
        lo_txt, hi_txt = wilson_digits(lo, hi, rate)
        measured = f"{k}/{n} {unit}; Wilson {100 * (1 - 2 * alpha / family):.4g} % interval [{lo_txt}, {hi_txt}]"
        tolerance = f"lower end > {rate:g} (one-sided {100 * (1 - alpha / family):.4g} %"
        tolerance += f", Bonferroni over {family})" if family > 1 else ")"
        return self.record(claim, lo > rate, check=check, measured=measured, tolerance=tolerance, kind=kind,
                           strict=strict)

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
        """Counts for :func:`markovlib.book.sweep.record_results`. ``checks`` and ``checks_passed`` count
        verifications only (identities document and are counted apart); then one count per kind."""
        rows = [r for r in self._rows.values() if r.kind != "identity"]
        return {"checks": len(rows), "checks_passed": sum(r.passed for r in rows),
                "checks_independent": sum(r.kind == "independent" for r in rows),
                "checks_same_code": sum(r.kind == "same code" for r in rows),
                "checks_stored_data": sum(r.kind == "stored data" for r in rows),
                "identities": len(self._rows) - len(rows)}

    def table(self) -> _Table:
        """The generated table (markdown; also its plain text) after asserting that every claim passed."""
        if not self._rows:
            raise ValueError("no claims were recorded")
        failed = [r.claim for r in self._rows.values() if not r.passed]
        if failed:
            raise AssertionError(f"claims failed: {failed}")
        lines = [TABLE_HEADER, "|---|---|---|---|---|---|"]
        for r in self._rows.values():
            cells = [r.claim, r.check, r.kind, r.measured, r.tolerance, "PASS" if r.passed else "FAIL"]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        text = _Table("\n".join(lines))
        text.markdown = str(text)
        return text
