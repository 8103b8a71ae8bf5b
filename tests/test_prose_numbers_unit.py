"""prose_numbers: what counts as a number from nowhere in a chapter's prose (issue 35, item 2)."""
import nbformat

from markovlib.book.prose_numbers import named_defaults, prose, stray_numbers


def test_glued_named_typed_and_paper_items_are_not_stray(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["markovlib"] = {"typed_numbers": {"0.75": "the paper, Sec. 5.2"}}
    nb.cells = [nbformat.v4.new_markdown_cell(
        "By Thm 2 and Fig. 4, with `steps` = 1000, the rate is {glue:text}`rate` and $x = 3$; the chain has p 0.75. "
        "But 17 runs failed.")]
    path = tmp_path / "c.ipynb"
    nbformat.write(nb, path)
    found = stray_numbers(path)
    assert [num for _, num, _ in found] == ["17"], found
    assert "1000" in named_defaults(nb.cells[0].source)
    assert "3" not in prose("$x = 3$")
