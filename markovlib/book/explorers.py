"""Explorers that work in the rendered book without a kernel: sliders over a precomputed grid of frames.

A live explorer (:func:`markovlib.book.widgets.explorer`) redraws a figure with a part's drawing function each time a
slider moves; that needs a kernel. :func:`static_explorer` calls the SAME drawing function once per point of a grid
of slider values, at batch time (when the chapter is executed), and packs the frames into one sprite image. The
chapter shows two outputs:

* the sprite, an ``image/png`` output (nbval compares no pixels; the book writes it to ``_images/``);
* a small HTML block (``text/html``, compared by nbval: names, values and displayed outcomes only, no pixels)
  that ``book/_static/explorer.js`` turns into one range slider per parameter and a view that shows the frame of
  the current slider values, with the outcome the figure displays (a limit, a Betti number) as text beside it.

Everything is served from the book's own ``_static``: no CDN, no request leaves the page's host. Without JavaScript
the sprite shows every frame at once. Grid sizes are the chapter's choice (``max_frames`` caps them, so a page stays
well under its 5 MB budget: a frame of the default 480 x 330 pixels with a 96-colour palette weighs 15-40 kB).
"""
from __future__ import annotations

import html
import inspect
import io
import itertools
import json
import math
import re

import numpy as np

MAX_FRAMES = 150


def _grid(grid) -> list[tuple[str, list]]:
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid must be a non-empty dict name -> list of values, got {grid!r}")
    out = []
    for name, values in grid.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"grid names must be identifiers, got {name!r}")
        values = list(values)
        if not values or any(isinstance(v, bool) or not isinstance(v, (int, float, str)) for v in values):
            raise ValueError(f"grid[{name!r}] must be a non-empty list of numbers or strings, got {values!r}")
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            raise ValueError(f"grid[{name!r}] must hold finite values, got {values!r}")
        out.append((name, values))
    return out


def _label(v) -> str:
    """A slider value as the page prints it (floats with up to 4 significant decimals, stable across machines)."""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _render(draw, values, size, dpi) -> tuple[np.ndarray, dict]:
    """One frame: ``draw(**values, ax=ax)`` (or ``fig=fig`` for drawings with several panels) on a fresh figure of
    ``size`` pixels; returns its RGB pixels and what ``draw`` returned."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    try:
        params = inspect.signature(draw).parameters
        if "fig" in params:
            result = draw(**values, fig=fig)
        else:
            result = draw(**values, ax=fig.add_subplot())
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())
        if rgba.shape[:2] != (size[1], size[0]):
            raise RuntimeError(f"the drawing changed the figure size to {rgba.shape[1]} x {rgba.shape[0]} pixels")
        return rgba[..., :3].copy(), (result if isinstance(result, dict) else {})
    finally:
        plt.close(fig)


class StaticExplorer:
    """The precomputed frames of one explorer: ``sprite`` (PNG bytes), ``values`` (the text each frame displays),
    ``results`` (what the drawing function returned at each frame, so a chapter counts from them instead of parsing
    the text), the slider grid, and :meth:`show` (the two outputs of the chapter cell). Built by
    :func:`static_explorer`."""

    def __init__(self, name, grid, sprite, values, size, cols, initial, title, results=None):
        self.name, self.grid, self.sprite, self.values = name, grid, sprite, values
        self.results = list(results) if results is not None else [None] * len(values)
        self.size, self.cols, self.initial, self.title = size, cols, initial, title

    @property
    def n_frames(self) -> int:
        return len(self.values)

    def index(self, **values) -> int:
        """The frame index of a point of the grid (row-major over the sliders, the first slider slowest)."""
        idx = 0
        for name, grid_values in self.grid:
            if name not in values:
                raise ValueError(f"missing slider value {name!r}")
            if values[name] not in grid_values:
                raise ValueError(f"{name} = {values[name]!r} is not a grid value {grid_values!r}")
            idx = idx * len(grid_values) + grid_values.index(values[name])
        return idx

    def html(self) -> str:
        """The control block: one element the page script turns into sliders and a frame view (no pixels)."""
        sliders = [{"name": n, "labels": [_label(v) for v in vs]} for n, vs in self.grid]
        attrs = {
            "data-name": self.name, "data-title": self.title, "data-tile-w": str(self.size[0]),
            "data-tile-h": str(self.size[1]), "data-cols": str(self.cols), "data-frames": str(self.n_frames),
            "data-initial": str(self.initial), "data-sliders": json.dumps(sliders, separators=(",", ":")),
            "data-values": json.dumps(self.values, separators=(",", ":")),
        }
        body = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
        return (f'<div class="mk-explorer" id="mk-explorer-{self.name}" {body}>'
                f'<p class="mk-explorer-hint">Explorer <b>{html.escape(self.title)}</b>: {self.n_frames} frames '
                "precomputed with the chapter's drawing function; the sliders move over them (without JavaScript, "
                "the sheet above shows them all). In Jupyter the explorer is live.</p></div>")

    def show(self):
        """Display the sprite (image/png) and the control block (text/html) as two outputs of the cell."""
        from IPython.display import HTML, Image, display

        display(Image(data=self.sprite, format="png"))
        display(HTML(self.html()))

    def __repr__(self):
        return f"<StaticExplorer {self.name}: {self.n_frames} frames of {self.size[0]} x {self.size[1]}>"


def static_explorer(draw, grid, *, name: str, value, title: str = "", initial=None, size=(480, 330), dpi=80,
                    colors: int = 96, max_frames: int = MAX_FRAMES, progress: bool = True) -> StaticExplorer:
    """Precompute an explorer: ``draw(**point, ax=ax)`` at every point of ``grid`` (name -> list of slider values,
    in slider order), the text ``value(result)`` that each frame displays (``result`` is what ``draw`` returned),
    and one palette PNG sprite of all frames. ``initial`` (a dict of grid values) is the frame shown first.
    ``name`` (an identifier, unique in the book) names the explorer for the page script and the browser test."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"name must be a lowercase identifier, got {name!r}")
    if not callable(draw) or not callable(value):
        raise ValueError("draw and value must be callables")
    grid = _grid(grid)
    n = math.prod(len(v) for _, v in grid)
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise ValueError(f"max_frames must be an integer >= 1, got {max_frames!r}")
    if n > max_frames:
        raise ValueError(f"grid has {n} points, more than max_frames = {max_frames} (the page weight budget)")
    if not (isinstance(size, (tuple, list)) and len(size) == 2 and all(isinstance(s, int) and 64 <= s <= 1200
                                                                        for s in size)):
        raise ValueError(f"size must be (width, height) in pixels, each in [64, 1200], got {size!r}")
    if isinstance(colors, bool) or not isinstance(colors, int) or not 2 <= colors <= 256:
        raise ValueError(f"colors must be an integer in [2, 256], got {colors!r}")
    from PIL import Image

    from .progress import progress_bar

    points = [dict(zip([g for g, _ in grid], combo)) for combo in itertools.product(*(v for _, v in grid))]
    frames, texts, results = [], [], []
    for point in progress_bar(points, desc=f"explorer {name}", disable=not progress):
        pixels, result = _render(draw, point, tuple(size), dpi)
        frames.append(pixels)
        results.append(result)
        texts.append(str(value(result)))
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    sheet = np.full((rows * size[1], cols * size[0], 3), 255, dtype=np.uint8)
    for i, px in enumerate(frames):
        r, c = divmod(i, cols)
        sheet[r * size[1]:(r + 1) * size[1], c * size[0]:(c + 1) * size[0]] = px
    # one palette for the whole sheet, so every frame shares the same colours; no dithering (stable, smaller)
    img = Image.fromarray(sheet).quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    explorer = StaticExplorer(name, grid, buf.getvalue(), texts, tuple(size), cols, 0, title or name, results)
    explorer.initial = explorer.index(**initial) if initial is not None else 0
    return explorer
