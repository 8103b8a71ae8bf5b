import io

from markovlib.progress import progress_bar


def test_batch_bar_is_text_and_draws_only_start_and_end():
    out = io.StringIO()
    for _ in progress_bar(range(1000), file=out, desc="x"):
        pass
    text = out.getvalue()
    assert text.count("\r") <= 3  # the start, the end (and tqdm's final refresh): no timing-dependent updates
    assert "1000/1000" in text and "x:" in text


def test_disable_is_respected():
    out = io.StringIO()
    for _ in progress_bar(range(10), file=out, disable=True):
        pass
    assert out.getvalue() == ""
