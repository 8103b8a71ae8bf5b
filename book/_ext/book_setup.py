"""Serve MathJax 3 from the book itself instead of a CDN.

The book must render offline (CI's browser test has no internet), so the MathJax build that the pip package
``django-static-mathjax`` ships (pinned in requirements.txt; it needs no Django) is copied into
``_static/mathjax`` and Sphinx's ``mathjax_path`` points there.

It also serves the static explorers' script and style (``book/_static/explorer.js``, ``explorer.css``; see
:mod:`markovlib.book.explorers`) from the book's ``_static``, and drops repeated inline <script> blocks: sphinx-thebe registers its configuration script once per
``env-before-read-docs`` and jupyter-book fires that more than once, so pages declared ``const THEBE_JS_URL`` twice
(a SyntaxError in the browser console).
"""
from __future__ import annotations

import shutil
from pathlib import Path


def _mathjax_es5() -> Path:
    import mathjax  # the django-static-mathjax package

    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


STATIC = Path(__file__).resolve().parents[1] / "_static"


def _config_inited(app, config):
    config.mathjax_path = "mathjax/tex-mml-chtml.js"
    config.html_static_path = list(config.html_static_path) + [str(STATIC)]


def _build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    dest = Path(app.outdir) / "_static" / "mathjax"
    if not (dest / "tex-mml-chtml.js").exists():
        shutil.copytree(_mathjax_es5(), dest, dirs_exist_ok=True)


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", None) or "", tuple(sorted(attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def setup(app):
    _mathjax_es5()  # fail early, with an ImportError naming the package, if it is not installed
    app.connect("config-inited", _config_inited)
    app.connect("build-finished", _build_finished)
    app.connect("html-page-context", _dedupe_scripts)
    app.add_js_file("explorer.js")
    app.add_css_file("explorer.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
