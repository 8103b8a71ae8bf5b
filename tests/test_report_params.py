"""Tests of the chapter helpers: report (printing policy, verification records), params, numdiff, roots."""
import math

import numpy as np
import pytest

from markovlib.book import formatting, inference, params, report
from markovlib.book.glue import glue
from markovlib.numerics import numdiff, roots


def test_fixed_prints_no_negative_zero_and_rounds():
    assert formatting.fixed(-1e-12, 4) == "0.0000"
    assert formatting.fixed(0.123456, 3) == "0.123"
    assert formatting.fixed(float("nan")) == "nan"
    with pytest.raises(ValueError, match="decimals"):
        formatting.fixed(1.0, -1)


def test_bound_prints_the_bound_or_the_failure():
    assert formatting.bound(3e-14, 1e-12) == "< 1e-12"
    assert formatting.bound(-3e-14, 1e-12) == "< 1e-12"
    assert "not < 1e-12" in formatting.bound(2e-12, 1e-12)
    assert "not" in formatting.bound(float("nan"), 1e-12)
    assert formatting.within(-1e-13, 1e-12) and not formatting.within(float("nan"), 1.0)
    with pytest.raises(ValueError, match="limit"):
        formatting.bound(1.0, 0)


def test_ladder_limit_rounds_up_to_one_digit():
    assert formatting.ladder_limit(4.1e-8) == 7e-8
    assert formatting.ladder_limit(2.49e-8) == 5e-8
    assert formatting.ladder_limit(1e-9, floor=1e-8) == 1e-8
    assert formatting.ladder_limit(-2e-3, margin=1.0) == 2e-3
    assert formatting.bound(4.1e-8, formatting.ladder_limit(4.1e-8)) == "< 7e-08"
    for x in np.geomspace(1e-15, 1e3, 97):
        lim = formatting.ladder_limit(x)
        assert lim >= 1.5 * x and lim < 1.5 * x * 2.5 and formatting.bound(x, lim) == f"< {lim:.0e}"
    with pytest.raises(ValueError, match="margin"):
        formatting.ladder_limit(1.0, margin=0.5)


def test_wilson_interval_covers_and_matches_closed_form():
    assert inference.wilson_interval(np.arange(1, 1001), np.arange(1, 1001), z=3.29)[1].min() == 1.0  # exact ends
    lo, hi = inference.wilson_interval(0, 10)
    assert lo == 0 and 0.2 < hi < 0.35
    lo, hi = inference.wilson_interval(5, 10)
    assert lo < 0.5 < hi and math.isclose(lo + hi, 1.0)
    # Monte Carlo coverage of the 95 % interval at n = 40, p = 0.3 (the Wilson interval is close to nominal)
    rng = np.random.default_rng(0)
    k = rng.binomial(40, 0.3, size=4000)
    lo, hi = inference.wilson_interval(k, np.full(k.shape, 40))
    assert 0.92 < np.mean((lo <= 0.3) & (0.3 <= hi)) < 0.98
    with pytest.raises(ValueError):
        inference.wilson_interval(3, 2)


def test_verification_records_one_row_per_claim_and_raises_on_failure():
    v = report.Verification()
    assert v.record("a", True, check="x", measured="< 1e-13", tolerance="1e-12", kind="independent")
    with pytest.raises(ValueError, match="already recorded"):
        v.record("a", True, check="x", measured="1", kind="same code")
    with pytest.raises(AssertionError, match="claim failed: b"):
        v.record("b", np.array([True, False]), check="y", measured="3 of 4", kind="same code")
    v.record("e", True, check="by construction", measured="rank 1", kind="identity")
    assert not v.all_passed
    assert v.summary() == {"checks": 2, "checks_passed": 1, "checks_independent": 1, "checks_same_code": 1,
                           "checks_stored_data": 0, "identities": 1}
    with pytest.raises(AssertionError, match="claims failed"):
        v.table()
    w = report.Verification()
    w.record("c | d", True, check="k", measured="global_min", kind="stored data", categorical=True)
    table = w.table()
    assert table.splitlines()[0] == report.TABLE_HEADER == "| claim | check | kind | measured | tolerance | result |"
    assert table.splitlines()[2] == "| c \\| d | k | stored data | global_min |  | PASS |"
    assert table._repr_markdown_() == str(table)


@pytest.mark.parametrize("measured, tolerance, categorical, message", [
    ("", "", False, "empty"),
    ("yes", "", False, "bare"),
    ("yes (slopes in range)", "slope in 1 +- 0.2", False, "bare"),
    ("no", "", True, "bare"),
    (">= 5 of 6 seeds", "", False, "threshold"),
    ("5/6 (95 % Wilson lower bound >= 0.44)", "", False, "threshold"),
    ("at least 0.9", "0.9", False, "threshold"),
    ("< 1e-12", "1e-12", False, "repeats"),
    ("< 1e-08", "1e-8 (relative)", False, "repeats"),
    ("0.5", "0.5", False, "repeats"),
    ("as stated", "", False, "no number"),
])
def test_measured_column_refuses_what_is_not_a_measurement(measured, tolerance, categorical, message):
    with pytest.raises(ValueError, match=message):
        report.check_measured(measured, tolerance, categorical)
    with pytest.raises(ValueError, match=message):
        report.Verification().record("c", True, check="x", measured=measured, tolerance=tolerance, kind="independent",
                                     categorical=categorical)


def test_measured_column_accepts_measurements():
    for measured, tolerance, categorical in [("< 1e-13", "1e-10", False), ("3/4 seeds", "", False),
                                             ("ratio 7.2", "ratio > 5", False), ("global_min", "", True),
                                             ("slopes 1.01, 0.99", "slope in 1 +- 0.2", False)]:
        report.check_measured(measured, tolerance, categorical)
    with pytest.raises(ValueError, match="kind"):
        report.Verification().record("c", True, check="x", measured="1", kind="independent of markovlib")


def test_record_count_uses_the_one_sided_wilson_bound_against_a_fixed_rate():
    v = report.Verification()
    assert v.record_count("most seeds", 9, 10, rate=0.5, check="10 seeds", kind="independent")
    row = v["most seeds"]
    lo, hi = inference.wilson_interval(9, 10, inference.wilson_lower_z(0.05))
    assert row.measured == f"9/10 seeds; Wilson 90 % interval [{lo:.2f}, {hi:.2f}]" and lo > 0.5
    assert row.tolerance == "lower end > 0.5 (one-sided 95 %)"
    # 7/10 has a lower end below 1/2: the claim fails
    with pytest.raises(AssertionError, match="claim failed: some seeds"):
        v.record_count("some seeds", 7, 10, rate=0.5, check="10 seeds", kind="independent")
    # Bonferroni over 8 cells widens the bound: 9/10 no longer clears 0.6
    assert v.record_count("cells", 9, 10, rate=0.6, check="x", kind="same code", family=8, strict=False) is False
    assert "Bonferroni over 8" in v["cells"].tolerance
    with pytest.raises(ValueError, match="rate"):
        v.record_count("low rate", 3, 10, rate=0.2, check="x", kind="independent")
    # the bound is the normal quantile of 1 - alpha/family
    assert abs(inference.wilson_lower_z(0.05) - 1.6448536) < 1e-6
    assert abs(inference.wilson_lower_z(0.05, 10) - 2.5758293) < 1e-6


def test_glue_returns_the_text_and_checks_the_name():
    assert glue("seeds_ok", "9/10") == "9/10"
    assert glue("ratio", 2.5) == "2.5"
    with pytest.raises(ValueError, match="name"):
        glue("not a name", "x")


def test_params_accept_lists_from_yaml_and_name_bad_values():
    assert params.chains("pq", [[0.5, 0.8], (0.1, 0.2)], margin=0.1) == [(0.5, 0.8), (0.1, 0.2)]
    with pytest.raises(ValueError, match=r"pq\[1\]"):
        params.chains("pq", [[0.5, 0.8], [0.5, 0.55]], margin=0.1)
    with pytest.raises(ValueError, match=r"pq\[0\]\[0\]"):
        params.chains("pq", [[1.5, 0.8]])
    with pytest.raises(ValueError, match="seeds"):
        params.positive_int("seeds", 0)
    with pytest.raises(ValueError, match="x must be a finite"):
        params.real("x", float("inf"))
    assert params.int_list("s", [0, 3]) == [0, 3]
    assert params.chains("pq", "[[0.8, 0.75], [0.2, 0.15]]") == [(0.8, 0.75), (0.2, 0.15)]  # papermill -p text
    with pytest.raises(ValueError, match="pq must be a list"):
        params.chains("pq", "[[0.8, 0.75")
    with pytest.raises(ValueError, match=r"s\[1\]"):
        params.int_list("s", [0, True])


def test_finite_differences_against_closed_forms():
    f = lambda x: x[0] ** 3 * x[1] + np.sin(x[1])  # noqa: E731
    x = np.array([0.7, -0.4])
    g = numdiff.fd_gradient(f, x)
    assert np.allclose(g, [3 * 0.7**2 * -0.4, 0.7**3 + np.cos(-0.4)], atol=1e-8)
    H = numdiff.fd_hessian(f, x)
    assert np.allclose(H, [[6 * 0.7 * -0.4, 3 * 0.7**2], [3 * 0.7**2, -np.sin(-0.4)]], atol=1e-6)


def test_multistart_roots_finds_every_zero_of_a_known_field():
    fun = lambda x: np.array([x[0] ** 2 - 1, x[1]])  # noqa: E731  zeros (+-1, 0)
    found, ok = roots.multistart_roots(fun, np.random.default_rng(0).uniform(-2, 2, (20, 2)))
    assert ok.mean() > 0.9
    assert np.allclose(np.abs(found[ok, 0]), 1) and np.allclose(found[ok, 1], 0, atol=1e-10)
    assert roots.find_root(lambda x: np.array([x[0] ** 2 + 1]), [0.3]) is None  # no real zero


def test_z_score_is_never_nan():
    assert inference.z_score(1.2, 1.0, 0.1) == pytest.approx(2.0)
    assert inference.z_score(1.0, 1.0, 0.0) == 0.0
    assert inference.z_score(1.1, 1.0, 0.0) == math.inf
    with pytest.raises(ValueError, match="std_err"):
        inference.z_score(1.0, 1.0, -1.0)


def test_mean_test_is_student_t_with_a_floored_standard_error():
    from scipy import stats
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, size=50)
    res = inference.mean_test(x, 1.3)
    se = x.std(ddof=1) / np.sqrt(50)  # independent: the textbook formulas written out
    assert abs(res.std_err - se) < 1e-15 and abs(res.z - abs(x.mean() - 1.3) / se) < 1e-12
    assert abs(res.pvalue - stats.ttest_1samp(x, 1.3).pvalue) < 1e-12
    const = inference.mean_test(np.full(8, np.log(2)), np.log(2))  # the same loss on every sequence
    assert const.std_err == 1e-13 and const.z < 1 and const.pvalue > 0.3
    assert inference.mean_test(np.full(8, 1.0), 1.0 + 1e-9).z > 1e3  # a real gap is not hidden by the floor
    for bad in ([1.0], [1.0, np.nan]):
        with pytest.raises(ValueError, match="samples"):
            inference.mean_test(bad, 0.0)
    with pytest.raises(ValueError, match="se_floor"):
        inference.mean_test(x, 0.0, se_floor=0.0)


def test_wilson_digits_never_print_a_failing_lower_end_as_the_rate():
    assert formatting.wilson_digits(0.9497, 1.0, 0.95) == ("0.9497", "1.0000")
    assert formatting.wilson_digits(0.9503, 1.0, 0.95)[0] == "0.9503"
    assert formatting.wilson_digits(0.7312, 0.9, 0.5) == ("0.73", "0.90")
    assert formatting.wilson_digits(0.5049, 0.9, 0.5)[0] == "0.505"
    for lo in np.linspace(0.4, 0.6, 2001):  # the printed end is on the same side of the rate as the end itself
        txt = formatting.wilson_digits(lo, 1.0, 0.5)[0]
        assert (float(txt) > 0.5) == (lo > 0.5) or txt == "0.500000"
    v = report.Verification()
    with pytest.raises(AssertionError):
        v.record_count("c", 120, 120, rate=0.95, check="x", kind="independent", family=12)


def test_record_count_refuses_a_handful_of_seeds():
    v = report.Verification()
    with pytest.raises(ValueError, match="at least 10"):
        v.record_count("three unanimous seeds", 3, 3, rate=0.5, check="3 seeds", kind="independent")
    with pytest.raises(ValueError, match="at least 20"):
        v.record_count("stored", 15, 15, rate=0.5, check="15 stored runs", kind="stored data")
    assert v.record_count("stored", 20, 20, rate=0.5, check="20 stored runs", kind="stored data")
    assert v.record_count("explicit", 5, 5, rate=0.5, check="x", kind="same code", min_n=5)


def test_declared_parameters_check_every_value_and_render_their_table():
    spec = params.declare(steps=params.Int(10, why="a plateau needs time"),
                          burn=params.Int(0, "steps", below=True, why="measured before the end"),
                          pq=params.Chains(0.1, params.THEORY_RANGE, why="Part I's theory range"),
                          opt=params.Choice(["sgd", "adam"], why="the two optimizers"),
                          lr=params.Real(0.0, 1.0, closed=False, why="a step"),
                          require=[("burn < steps // 2", lambda v: v["burn"] < v["steps"] // 2, "half the run")])
    good = dict(steps=100, burn=10, pq=[[0.2, 0.3]], opt="sgd", lr=0.1)
    assert spec.check(good) == dict(steps=100, burn=10, pq=[(0.2, 0.3)], opt="sgd", lr=0.1)
    md = spec.table().markdown.splitlines()
    assert md[0] == "| parameter | value | accepted | why |" and len(md) == 2 + 5 + 1
    assert "integer >= 0, < steps" in md[3] and "\\|p + q - 1\\| >= 0.1" in md[4]
    bad = [(dict(good, steps=5), "steps must be an integer >= 10, got 5 (a plateau needs time)"),
           (dict(good, burn=100), "burn must be an integer >= 0, < steps (>= 0, < 100), got 100"),
           (dict(good, burn=60), "burn < steps // 2 is required (half the run); got steps = 100, burn = 60"),
           (dict(good, pq=[[0.5, 0.48]]), "pq[0] = [0.5, 0.48] must satisfy |p + q - 1| >= 0.1"),
           (dict(good, opt="rmsprop"), "opt must be one of ['adam', 'sgd'], got 'rmsprop' (the two optimizers)"),
           (dict(good, lr=1.0), "lr must be a finite real number in (0.0, 1.0), got 1.0 (a step)"),
           (dict(good, steps=True), "steps must be an integer, got True")]
    for values, message in bad:
        with pytest.raises(ValueError) as info:
            spec.check(values)
        assert str(info.value).startswith(message), str(info.value)
    with pytest.raises(ValueError, match="is declared but not set"):
        spec.check({k: v for k, v in good.items() if k != "lr"})
    with pytest.raises(ValueError, match="params rule"):
        params.declare(x=3)


def test_summary_markdown_puts_the_glued_values_and_plain_references_in_place_of_the_roles():
    from markovlib.book.glue import summary_markdown

    text = ("1. The drift stays below {glue:text}`drift_bound` ({prf:ref}`thm-2`, {doc}`markov_data`, "
            "{cite:t}`makkuva2024local`; [Sec. 3](#sec-energy)); {glue:text}`missing` is left.")
    out = summary_markdown(text, {"drift_bound": "< 1e-7"})
    assert out == ("1. The drift stays below < 1e-7 (thm-2, markov_data, makkuva2024local; Sec. 3); "
                   "[missing: not computed in this run] is left.")
    assert "{" not in out and "`" not in out


def test_summary_reads_a_chapters_own_summary():
    from markovlib.book.glue import summary

    md = summary("markov_data", values={}).data
    assert md.startswith("**What this chapter shows, with this run's numbers**")
    assert "{glue:text}" not in md and "{prf:ref}" not in md and "{cite:" not in md
    with pytest.raises(ValueError, match="chapter must"):
        summary("no_such_chapter")


def test_int_multiple_of_names_the_parameter_and_the_spacing():
    spec = params.declare(prefix=params.Int(50, 1000, multiple_of=50, why="the curves are evaluated every 50 steps"))
    assert spec.check({"prefix": 250})["prefix"] == 250
    with pytest.raises(ValueError, match=r"prefix must be a multiple of 50, got 120 \(the curves"):
        spec.check({"prefix": 120})
    assert "a multiple of 50" in spec.table()
    with pytest.raises(ValueError, match="multiple_of"):
        params.Int(1, multiple_of=0)


def test_specs_load_finds_a_chapter_and_refuses_others():
    from markovlib.book import specs

    with pytest.raises(ValueError, match="chapter"):
        specs.load("../etc")
    with pytest.raises(ValueError, match="no declared parameters"):
        specs.load("no_such_chapter")
