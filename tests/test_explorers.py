"""Static explorers (markovlib.book.explorers): frames precomputed with a drawing function, a palette sprite, and the
control block that book/_static/explorer.js turns into sliders; the script itself driven in headless Chromium."""
import base64
import io
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from own_thread import run_in_own_thread  # noqa: E402
from PIL import Image  # noqa: E402

from markovlib.book.explorers import static_explorer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")


def draw_line(slope, shift, ax):
    """A toy drawing: a line of the given slope, shifted; it displays the sign of slope * shift."""
    x = np.linspace(-1, 1, 5)
    ax.plot(x, slope * x + shift, color="k")
    ax.set_ylim(-4, 4)
    ax.set_title(f"slope {slope}, shift {shift}")
    return {"sign": "positive" if slope * shift > 0 else "not positive"}


GRID = {"slope": [-1.0, 0.5, 2.0], "shift": [-1, 1]}


def _explorer(**kw):
    return static_explorer(draw_line, GRID, name="toy", value=lambda r: r["sign"], size=(160, 120), dpi=40,
                           progress=False, **kw)


def test_frames_follow_the_grid_in_row_major_order():
    ex = _explorer(initial={"slope": 2.0, "shift": 1})
    assert ex.n_frames == 6 and ex.cols == 3
    assert ex.values == ["positive", "not positive", "not positive", "positive", "not positive", "positive"]
    assert [r["sign"] for r in ex.results] == ex.values  # what draw returned, frame by frame
    assert ex.index(slope=0.5, shift=-1) == 2 and ex.initial == 5
    sheet = Image.open(io.BytesIO(ex.sprite))
    assert sheet.size == (3 * 160, 2 * 120) and sheet.mode == "P"
    tiles = np.asarray(sheet.convert("RGB")).reshape(2, 120, 3, 160, 3).transpose(0, 2, 1, 3, 4).reshape(6, 120, 160, 3)
    assert len({t.tobytes() for t in tiles}) == 6, "every frame is its own drawing"
    with pytest.raises(ValueError, match="not a grid value"):
        ex.index(slope=1.0, shift=1)


def test_the_control_block_carries_names_values_and_no_pixels():
    block = _explorer().html()
    assert 'class="mk-explorer"' in block and 'data-name="toy"' in block and "base64" not in block
    sliders = json.loads(re.search(r'data-sliders="([^"]*)"', block).group(1).replace("&quot;", '"'))
    assert sliders == [{"name": "slope", "labels": ["-1", "0.5", "2"]}, {"name": "shift", "labels": ["-1", "1"]}]


@pytest.mark.parametrize("kw, message", [
    ({"grid": {}}, "grid"), ({"grid": {"a b": [1]}}, "identifiers"), ({"grid": {"a": []}}, "non-empty"),
    ({"grid": {"a": [float("nan")]}}, "finite"), ({"name": "Toy"}, "name"), ({"max_frames": 4}, "max_frames"),
    ({"size": (10, 10)}, "size"), ({"colors": 1}, "colors"),
])
def test_bad_arguments_are_refused(kw, message):
    args = dict(grid=GRID, name="toy", value=lambda r: r["sign"], size=(160, 120), dpi=40, progress=False)
    args.update(kw)
    with pytest.raises(ValueError, match=message):
        static_explorer(draw_line, **args)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_the_page_script_moves_the_view_and_the_readout(tmp_path):
    # Playwright's sync API refuses a thread whose asyncio loop is running (test_browser's session browser
    # may hold one open in this xdist worker): drive the browser from a thread of its own
    run_in_own_thread(_drive_the_page, tmp_path)


def _drive_the_page(tmp_path):
    from playwright.sync_api import sync_playwright

    ex = _explorer(initial={"slope": -1.0, "shift": 1})
    src = base64.b64encode(ex.sprite).decode()
    page_html = (f'<html><head><link rel="stylesheet" href="explorer.css"></head><body>'
                 f'<div class="cell_output"><img src="data:image/png;base64,{src}">{ex.html()}</div>'
                 f'<script src="explorer.js"></script></body></html>')
    for f in ("explorer.js", "explorer.css"):
        (tmp_path / f).write_text((ROOT / "book" / "_static" / f).read_text())
    (tmp_path / "index.html").write_text(page_html)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox",
                                                                            "--disable-gpu"])
        page = browser.new_page()
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((tmp_path / "index.html").as_uri())
        page.wait_for_selector(".mk-explorer-value")
        assert page.inner_text(".mk-explorer-value") == "not positive"  # frame 1: slope -1, shift 1
        for slope_index, expected in [(2, "positive"), (1, "positive")]:
            page.eval_on_selector('input[name="slope"]', f"(el) => {{ el.value = '{slope_index}'; "
                                  "el.dispatchEvent(new Event('input')); }")
            frame = int(page.get_attribute(".mk-explorer", "data-frame"))
            assert frame == ex.index(slope=GRID["slope"][slope_index], shift=1)
            assert page.inner_text(".mk-explorer-value") == expected == ex.values[frame]
            left = page.eval_on_selector(".mk-explorer-sprite", "(el) => el.style.left")
            top = page.eval_on_selector(".mk-explorer-sprite", "(el) => el.style.top")
            assert (left, top) == (f"{-(frame % 3) * 160}px", f"{-(frame // 3) * 120}px")
        assert page.is_hidden("img.mk-explorer-hidden-sprite")
        assert not errors
        browser.close()
