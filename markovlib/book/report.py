"""What a chapter verified: a :class:`Verification` holds one record per claim (claim, check, kind of evidence
(:data:`KINDS`), measurement, tolerance, result); :meth:`Verification.record` raises ``AssertionError`` when a claim
fails and ``ValueError`` when a row would print no measurement; :meth:`Verification.record_count` records a claim
over seeds as a count with its Wilson interval against a rate fixed beforehand; the "What was verified" table is
generated from the records (:meth:`Verification.table`). Printing lives in :mod:`markovlib.book.formatting`, the
statistics in :mod:`markovlib.book.inference`, the prose's values in :mod:`markovlib.book.glue`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .formatting import as_float, wilson_digits
from .inference import MIN_LIVE, MIN_STORED, wilson_interval, wilson_lower_z

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
        rate = as_float("rate", rate)
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
