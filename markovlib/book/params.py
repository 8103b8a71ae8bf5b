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
import re
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


# ------------------------------------------------------------------------------------------------------------
# Declared parameters: a chapter states each parameter once (its kind, accepted range and the reason for the
# range), and one call checks them all; the same declaration renders the chapter's table of ranges.
# ------------------------------------------------------------------------------------------------------------
class Rule:
    """How one parameter is checked: ``check(name, value, known)`` returns the clean value or raises ValueError
    naming the parameter and its range; ``accepted`` is the range as text, for the table. A bound given as a string
    names a parameter declared before it (``Int(1, "steps")``: at most the value of ``steps``)."""

    def __init__(self, convert, accepted: str, why: str = "", lo=None, hi=None, strict_hi=False):
        if not isinstance(why, str):
            raise ValueError(f"why must be text, got {why!r}")
        self.convert, self.accepted, self.why = convert, accepted, why
        self.lo, self.hi, self.strict_hi = lo, hi, strict_hi

    def check(self, name, value, known):
        def resolve(b):
            if isinstance(b, str):
                if b not in known:
                    raise ValueError(f"the bound {b!r} of {name} names no parameter declared before it")
                return known[b]
            return b
        try:
            x = self.convert(name, value)
        except ValueError as exc:
            raise ValueError(f"{exc}" + (f" ({self.why})" if self.why else "")) from None
        lo, hi = resolve(self.lo), resolve(self.hi)
        for v in (x if isinstance(x, list) else [x]):
            if (lo is not None and v < lo) or (hi is not None and (v >= hi if self.strict_hi else v > hi)):
                named = isinstance(self.lo, str) or isinstance(self.hi, str)
                raise ValueError(f"{name} must be {'an ' if self.accepted[0] in 'aeiou' else ''}{self.accepted}"
                                 + (f" ({self._bounds(lo, hi)})" if named else "") + f", got {value!r}"
                                 + (f" ({self.why})" if self.why else ""))
        return x

    def _bounds(self, lo, hi):
        parts = [] if lo is None else [f">= {lo!r}"]
        return ", ".join(parts + ([] if hi is None else [f"{'<' if self.strict_hi else '<='} {hi!r}"]))


def _text_bound(b):
    return b if isinstance(b, str) else f"{b:g}"


def Int(lo=1, hi=None, *, why: str = "", below=False, multiple_of: int | None = None) -> Rule:
    """An integer in [lo, hi] (``below=True``: in [lo, hi)), a multiple of ``multiple_of`` if given (a stored
    curve's evaluation spacing, say); a bound may name an earlier parameter."""
    if multiple_of is not None and (isinstance(multiple_of, bool) or not isinstance(multiple_of, numbers.Integral)
                                    or multiple_of < 1):
        raise ValueError(f"multiple_of must be a positive integer, got {multiple_of!r}")

    def convert(name, v):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {v!r}")
        if multiple_of is not None and v % multiple_of:
            raise ValueError(f"{name} must be a multiple of {multiple_of}, got {v!r}")
        return int(v)
    text = f"integer >= {_text_bound(lo)}" + ("" if hi is None else f", {'<' if below else '<='} {_text_bound(hi)}")
    text += "" if multiple_of is None else f", a multiple of {multiple_of}"
    return Rule(convert, text, why, lo, hi, strict_hi=below)


def Real(lo=-math.inf, hi=math.inf, *, closed=True, why: str = "") -> Rule:
    """A finite real in [lo, hi] (open with ``closed=False``; numeric bounds only)."""
    b = "[]" if closed else "()"
    return Rule(lambda name, v: real(name, v, lo, hi, closed=closed), f"real in {b[0]}{lo:g}, {hi:g}{b[1]}", why)


def Probability(*, why: str = "") -> Rule:
    """A probability in the open interval (0, 1)."""
    return Rule(probability, "real in (0, 1)", why)


def Choice(options, *, why: str = "") -> Rule:
    """One of ``options``."""
    opts = list(options)
    return Rule(lambda name, v: choice(name, v, opts), "one of " + ", ".join(map(str, opts)), why)


def Flag(*, why: str = "") -> Rule:
    """True or False."""
    def convert(name, v):
        if not isinstance(v, bool):
            raise ValueError(f"{name} must be True or False, got {v!r}")
        return v
    return Rule(convert, "True or False", why)


def Text(*, why: str = "") -> Rule:
    """Any text."""
    def convert(name, v):
        if not isinstance(v, str):
            raise ValueError(f"{name} must be text, got {v!r}")
        return v
    return Rule(convert, "text", why)


def IntList(lo=0, hi=None, *, why: str = "") -> Rule:
    """A non-empty list of integers in [lo, hi]."""
    text = f"list of integers >= {_text_bound(lo)}" + ("" if hi is None else f", <= {_text_bound(hi)}")
    return Rule(lambda name, v: int_list(name, v, -(2 ** 62)), text, why, lo, hi)


def RealList(lo=-math.inf, hi=math.inf, *, closed=True, why: str = "") -> Rule:
    """A non-empty list of finite reals in [lo, hi]."""
    b = "[]" if closed else "()"
    return Rule(lambda name, v: real_list(name, v, lo, hi, closed=closed),
                f"list of reals in {b[0]}{lo:g}, {hi:g}{b[1]}", why)


def Pair(lo=-math.inf, hi=math.inf, *, closed=True, why: str = "") -> Rule:
    """Two finite reals in [lo, hi]."""
    b = "[]" if closed else "()"
    return Rule(lambda name, v: pair(name, v, lo, hi, closed=closed), f"pair of reals in {b[0]}{lo:g}, {hi:g}{b[1]}",
                why)


def PairList(lo=-math.inf, hi=math.inf, *, closed=True, why: str = "") -> Rule:
    """A non-empty list of pairs of finite reals in [lo, hi]."""
    b = "[]" if closed else "()"
    return Rule(lambda name, v: pair_list(name, v, lo, hi, closed=closed),
                f"list of pairs of reals in {b[0]}{lo:g}, {hi:g}{b[1]}", why)


def _chain_text(margin, within, many):
    box = "(0, 1)" if within is None else f"[{within[0]:g}, {within[1]:g}]"
    text = ("list of chains" if many else "chain") + f" (p, q), p and q in {box}"
    return text + (f", |p + q - 1| >= {margin:g}" if margin > 0 else "")


def Chain(margin: float = 0.0, within=None, *, why: str = "") -> Rule:
    """A chain (p, q) (see :func:`chain`)."""
    return Rule(lambda name, v: chain(name, v, margin, within), _chain_text(margin, within, False), why)


def Chains(margin: float = 0.0, within=None, *, why: str = "") -> Rule:
    """A non-empty list of chains (see :func:`chains`)."""
    return Rule(lambda name, v: chains(name, v, margin, within), _chain_text(margin, within, True), why)


class _Markdown(str):
    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return str(self)


class Declared:
    """A chapter's parameters, declared once (see :func:`declare`)."""

    def __init__(self, rules: dict, require=()):
        for name, rule in rules.items():
            if not isinstance(rule, Rule):
                raise ValueError(f"parameter {name} must be declared with a params rule (Int, Real, ...), "
                                 f"got {rule!r}")
        self.rules, self.require, self.values = dict(rules), list(require), {}

    def check(self, namespace: dict) -> dict:
        """Check every declared parameter's value in ``namespace`` (a chapter passes ``globals()``), in the order
        declared, then each cross-parameter requirement; return the clean values (tuples for pairs, ints, floats).
        The first bad value raises ValueError naming the parameter, its range and the reason."""
        out = {}
        for name, rule in self.rules.items():
            if name not in namespace:
                raise ValueError(f"parameter {name} is declared but not set in the parameters cell")
            out[name] = rule.check(name, namespace[name], out)
        for text, test, why in self.require:
            if not test(out):
                names = [n for n in self.rules if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w(])", text)]
                got = ", ".join(f"{n} = {out[n]!r}" for n in names)
                raise ValueError(f"{text} is required ({why}); got {got}")
        self.values = out
        return out

    def table(self) -> _Markdown:
        """The parameters as a table: name, value, accepted range, why (markdown in the book, text in nbval)."""
        rows = [("parameter", "value", "accepted", "why")]
        rows += [(n, repr(self.values.get(n, "")), r.accepted, r.why) for n, r in self.rules.items()]
        rows += [("(together)", "", t, w) for t, _, w in self.require]
        text = "\n".join("  ".join(str(c) for c in r) for r in rows)
        out = _Markdown(text)
        out.markdown = "\n".join("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |"
                                 for r in rows[:1] + [("---",) * 4] + rows[1:])
        return out


def declare(*, require=(), **rules) -> Declared:
    """Declare a chapter's parameters once: ``name=Rule`` for each (``Int``, ``Real``, ``Probability``,
    ``Chain``, ``Chains``, ``Choice``, ``Flag``, ``Text``, ``IntList``, ``RealList``, ``Pair``, ``PairList``, each
    with ``why=`` the reason for its range), and ``require`` a list of (text, test(values) -> bool, why) for
    conditions between parameters. The validation cell then reads

        SPEC = params.declare(p=params.Real(0.02, 0.98, why="Part I's theory range"), ...)
        globals().update(SPEC.check(globals()))
        SPEC.table()
    """
    return Declared(rules, require)
