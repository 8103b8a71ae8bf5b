"""Tests of markovlib.markov.drawings.frames_agree (the explorer-frame check of Part I's chapters)."""
import pytest

from markovlib.markov import drawings as markov_drawings


def test_frames_agree_counts_and_validates():
    outs = [{"reached": "global_min", "predicted": "global_min"}, {"reached": "local_min", "predicted": "global_min"}]
    assert markov_drawings.frames_agree(outs) == (1, 2)
    assert markov_drawings.frames_agree([]) == (0, 0)
    out = markov_drawings.draw_landscape(0.9, 0.9, 0.75, -0.75)
    assert markov_drawings.frames_agree([out]) == (1, 1)
    with pytest.raises(ValueError, match="results"):
        markov_drawings.frames_agree([{"reached": "x"}])
