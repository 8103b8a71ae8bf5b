import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from markovlib.book import plotting
from markovlib.markov import drawings


@pytest.mark.parametrize("p,q", [(0.9, 0.9), (0.1, 0.1), (0.3, 0.7)])
def test_critical_points_draws_every_case(p, q):
    plotting.use_style()
    fig, ax = plt.subplots()
    drawings.critical_points(ax, p, q)
    labels = [line.get_label() for line in ax.lines]
    assert any("global minima" in lab for lab in labels)
    if p + q != 1:
        assert any("local minima" in lab for lab in labels) and "saddle" in labels
    plotting.yardsticks(ax, 0.5, 0.6)
    plt.close(fig)
