"""The Kaplan-Meier estimate of a survival curve from right-censored times, with Greenwood's variance and the
log-log ("exponential Greenwood") pointwise interval (Kalbfleisch & Prentice, *The Statistical Analysis of Failure
Time Data*, 2nd ed., Sec. 4.3):

    S(t) = prod_{t_j <= t} (1 - d_j / n_j),
    Var log S(t) ~ sum_{t_j <= t} d_j / (n_j (n_j - d_j))                          (Greenwood),
    S(t)^{exp(+z s)} <= S <= S(t)^{exp(-z s)},  s = sqrt(sum d_j / (n_j (n_j - d_j))) / |log S(t)|,

over the distinct event times t_j, with n_j at risk (time >= t_j) and d_j events at t_j. A censored time ties with an
event time as at risk there (the usual convention). The log-log interval stays inside [0, 1]; where S = 1 (no event
yet) it is [1, 1], and where S = 0 it is [0, 0]. Unchecked kernel: callers validate.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class KaplanMeier(NamedTuple):
    times: np.ndarray     # distinct event times, increasing
    at_risk: np.ndarray   # n_j
    events: np.ndarray    # d_j
    survival: np.ndarray  # S(t_j), the value from t_j on
    lower: np.ndarray
    upper: np.ndarray
    n: int
    horizon: float        # the largest time observed (event or censored)


def kaplan_meier(times, observed, z=1.96) -> KaplanMeier:
    """The estimate of S(t) = P(T > t) from ``times`` (event or censoring times) and ``observed`` (True where the
    time is an event, False where it is censored)."""
    t = np.asarray(times, dtype=float)
    obs = np.asarray(observed, dtype=bool)
    event_times = np.unique(t[obs])
    n_j = (t[None, :] >= event_times[:, None]).sum(axis=1)
    d_j = ((t[None, :] == event_times[:, None]) & obs[None, :]).sum(axis=1)
    surv = np.cumprod(1.0 - d_j / n_j)
    with np.errstate(divide="ignore", invalid="ignore"):
        green = np.cumsum(np.where(n_j > d_j, d_j / (n_j * (n_j - d_j)), np.inf))
        log_s = np.log(surv)
        spread = np.exp(z * np.sqrt(green) / np.abs(log_s))
        lower = np.where(surv > 0, surv ** spread, 0.0)
        upper = np.where(surv > 0, surv ** (1.0 / spread), 0.0)
    lower = np.where(surv >= 1.0, 1.0, lower)
    upper = np.where(surv >= 1.0, 1.0, upper)
    return KaplanMeier(event_times, n_j, d_j, surv, lower, upper, int(t.size), float(t.max()) if t.size else 0.0)


def survival_at(km: KaplanMeier, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S, lower, upper) of the step function at the times ``t`` (1 before the first event)."""
    idx = np.searchsorted(km.times, np.asarray(t, dtype=float), side="right") - 1
    pick = lambda a: np.where(idx >= 0, a[np.maximum(idx, 0)] if a.size else 1.0, 1.0)  # noqa: E731
    return pick(km.survival), pick(km.lower), pick(km.upper)


def median_time(km: KaplanMeier, curve="survival") -> float:
    """The first event time at which ``curve`` (survival, lower or upper) reaches 1/2 or below; inf if never
    (the median is not reached before the horizon). The median's interval is (median of lower, median of upper)."""
    values = getattr(km, curve)
    hit = np.flatnonzero(values <= 0.5)
    return float(km.times[hit[0]]) if hit.size else float("inf")
