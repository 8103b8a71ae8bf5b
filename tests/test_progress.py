import io

from markovlib.book.progress import progress_bar


def test_batch_bar_is_text_and_draws_only_start_and_end():
    out = io.StringIO()
    for _ in progress_bar(range(1000), file=out, desc="x"):
        pass
    text = out.getvalue()
    assert text.count("\r") <= 3  # the start, the end (and tqdm's final refresh): no timing-dependent updates
    assert "1000/1000" in text and "x:" in text
    short = io.StringIO()
    for _ in progress_bar(range(5), file=short, leave=False):
        pass
    assert "5/5" in short.getvalue()  # the final state is kept in batch records


def test_disable_is_respected():
    out = io.StringIO()
    for _ in progress_bar(range(10), file=out, disable=True):
        pass
    assert out.getvalue() == ""
