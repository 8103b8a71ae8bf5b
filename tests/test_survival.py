"""markovlib.numerics.survival: the Kaplan-Meier estimate against a textbook table and by coverage."""
import numpy as np

from markovlib.numerics.survival import kaplan_meier, median_time, survival_at

# Freireich et al. (1963), 6-MP arm: remission times in weeks, "+" censored (Kalbfleisch & Prentice, Table 1.1)
SIX_MP = [(6, 1), (6, 1), (6, 1), (6, 0), (7, 1), (9, 0), (10, 1), (10, 0), (11, 0), (13, 1), (16, 1), (17, 0),
          (19, 0), (20, 0), (22, 1), (23, 1), (25, 0), (32, 0), (32, 0), (34, 0), (35, 0)]
# the published estimate (independent): time, at risk, events, S(t), Greenwood standard error of S(t)
TABLE = [(6, 21, 3, 0.857, 0.0764), (7, 17, 1, 0.807, 0.0869), (10, 15, 1, 0.753, 0.0963), (13, 12, 1, 0.690, 0.1068),
         (16, 11, 1, 0.627, 0.1141), (22, 7, 1, 0.538, 0.1282), (23, 6, 1, 0.448, 0.1346)]


def test_six_mp_table():
    t, d = zip(*SIX_MP)
    km = kaplan_meier(t, np.array(d, dtype=bool))
    assert km.times.tolist() == [r[0] for r in TABLE]
    assert km.at_risk.tolist() == [r[1] for r in TABLE] and km.events.tolist() == [r[2] for r in TABLE]
    np.testing.assert_allclose(km.survival, [r[3] for r in TABLE], atol=5e-4)
    green = np.cumsum(km.events / (km.at_risk * (km.at_risk - km.events)))
    np.testing.assert_allclose(km.survival * np.sqrt(green), [r[4] for r in TABLE], atol=5e-5)
    assert np.all((km.lower <= km.survival) & (km.survival <= km.upper) & (km.lower >= 0) & (km.upper <= 1))
    assert median_time(km) == 23 and median_time(km, "lower") == 13 and median_time(km, "upper") == float("inf")
    s, lo, hi = survival_at(km, [0, 6, 8, 40])
    assert s[0] == lo[0] == hi[0] == 1.0
    assert s[1] == km.survival[0] and s[2] == km.survival[1] and s[3] == km.survival[-1]


def test_no_events_and_all_events():
    none = kaplan_meier([5, 5, 5], [False] * 3)
    assert none.times.size == 0 and median_time(none) == float("inf")
    assert [float(x[0]) for x in survival_at(none, [4])] == [1.0, 1.0, 1.0]
    every = kaplan_meier([1, 2, 3], [True] * 3)
    assert every.survival[-1] == 0 and every.lower[-1] == 0 and every.upper[-1] == 0
    assert np.all(np.isfinite(every.lower)) and np.all(np.isfinite(every.upper))


def test_log_log_interval_covers_the_truth():
    """Monte Carlo (independent): exponential times with rate 1 censored by uniform times on (0, 3); the 95 %
    log-log interval at t = 0.7 covers S(0.7) = exp(-0.7) in about 95 % of 400 samples of size 60."""
    rng = np.random.default_rng(7)
    covered, err = 0, []
    for _ in range(400):
        life, cens = rng.exponential(1.0, 60), rng.uniform(0, 3, 60)
        km = kaplan_meier(np.minimum(life, cens), life <= cens)
        s, lo, hi = (float(x) for x in survival_at(km, 0.7))
        covered += lo <= np.exp(-0.7) <= hi
        err.append(s - np.exp(-0.7))
    assert 0.92 <= covered / 400 <= 0.98
    assert abs(np.mean(err)) < 0.01
