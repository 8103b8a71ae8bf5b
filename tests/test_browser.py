"""The rendered book as readers meet it, in a real browser (Debian's chromium driven by Playwright).

For every page of _build/html: no console errors, MathJax typeset every formula and left no raw TeX in the visible
text, every image loaded, every internal link and anchor resolves; the table of contents lists every chapter of
_toc.yml; the site search finds a known term; widget explorers show their static figure and the hint. A full-page
screenshot of each page goes to _build/screenshots/ for review.

The book is built first when _build/html is missing or older than its sources (CI builds it before pytest).
"""
from __future__ import annotations

import functools
import http.server
import math
import re
import subprocess
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
HINT = "Run this notebook in Jupyter to interact"

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(),
                                 reason="Debian's chromium is not installed (.ci/run installs it)")]


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    files += [c["file"] for c in toc.get("chapters", [])]
    return files


def _sources():
    yield from (ROOT / f for f in ("_config.yml", "_toc.yml"))
    yield from (ROOT / "book").rglob("*.*")


@pytest.fixture(scope="session")
def site():
    index = HTML / "index.html"
    newest = max(p.stat().st_mtime for p in _sources() if p.is_file())
    if not index.exists() or index.stat().st_mtime < newest:
        subprocess.run(["jupyter-book", "build", str(ROOT)], check=True, capture_output=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(HTML))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield b
        b.close()


def _is_redirect(path: Path) -> bool:
    return 'http-equiv="Refresh"' in path.read_text(encoding="utf-8", errors="ignore").replace("refresh", "Refresh")


def _pages():
    """Every content page of the built site (redirect stubs such as index.html are tested separately)."""
    if not HTML.exists():  # collected before the fixture built it: enumerate the toc
        return [f + ".html" for f in _toc_files()] + ["genindex.html", "search.html"]
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if not str(p.relative_to(HTML)).startswith(("_static", "_sources", "_images"))
                  and not _is_redirect(p))


def test_index_redirects_to_the_intro(site, browser):
    page = browser.new_page()
    page.goto(site + "index.html")
    page.wait_for_url("**/book/intro.html", timeout=15_000)
    page.close()


_RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|\$\\[a-zA-Z]")

# visible text outside code (code cells may legitimately contain '$' and backslashes)
_VISIBLE_TEXT = """() => {
  const clone = document.querySelector('main, article, body').cloneNode(true);
  clone.querySelectorAll('pre, code, .highlight, script, style, mjx-container, .cell_output').forEach(e => e.remove());
  return clone.innerText;
}"""


@pytest.fixture(scope="session")
def visited(site, browser):
    """Visit every page once; return per-page observations."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    results = {}
    for rel in _pages():
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors, failed = [], []
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.on("requestfailed", lambda r, failed=failed: failed.append(r.url))
        page.goto(site + rel, wait_until="load")
        n_math_src = page.evaluate("document.querySelectorAll('.math').length")
        if n_math_src:
            page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000)
            page.evaluate("MathJax.startup.promise")
        # scroll through so that lazily loaded images load, then wait for them
        page.evaluate("async () => { for (let y = 0; y < document.body.scrollHeight; y += 800) {"
                      " window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20)); } }")
        page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=30_000)
        obs = {
            "errors": list(errors),
            "failed_requests": list(failed),
            "n_math_src": n_math_src,
            "n_math_rendered": page.evaluate("document.querySelectorAll('mjx-container').length"),
            "mathjax_errors": page.evaluate("document.querySelectorAll('mjx-merror, [data-mjx-error]').length"),
            "visible_text": page.evaluate(_VISIBLE_TEXT),
            "broken_images": page.evaluate(
                "Array.from(document.images).filter(i => !(i.naturalWidth > 0)).map(i => i.src)"),
            "n_images": page.evaluate("document.images.length"),
            "links": page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"),
            "ids": set(page.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
                       + page.evaluate("Array.from(document.querySelectorAll('a[name]')).map(e => e.name)")),
            "hint_has_figure": page.evaluate(
                """(hint) => Array.from(document.querySelectorAll('p')).filter(p => p.innerText.includes(hint))
                  .map(p => { const all = Array.from(document.querySelectorAll('img, p'));
                              const before = all.slice(0, all.indexOf(p)).filter(e => e.tagName === 'IMG');
                              const img = before[before.length - 1];
                              return !!img && img.naturalWidth > 0; })""", HINT),
            "url": page.url,
            "copy_buttons": page.evaluate("document.querySelectorAll('button.copybtn').length"),
            "code_cells": page.evaluate("document.querySelectorAll('div.cell div.highlight pre').length"),
            "ipynb_download": page.evaluate(
                "Array.from(document.querySelectorAll('a[href]')).some(a => a.href.endsWith('.ipynb'))"),
            "equation_numbers": page.evaluate("document.querySelectorAll('span.eqno').length"),
        }
        page.screenshot(path=str(SHOTS / (rel.replace("/", "__").replace(".html", ".png"))), full_page=True)
        results[rel] = obs
        page.close()
    return results


@pytest.mark.parametrize("rel", _pages())
def test_page_loads_without_console_errors(visited, rel):
    obs = visited[rel]
    assert obs["errors"] == [], f"console errors on {rel}: {obs['errors']}"
    assert obs["failed_requests"] == [], f"failed requests on {rel}: {obs['failed_requests']}"


@pytest.mark.parametrize("rel", _pages())
def test_math_is_typeset(visited, rel):
    obs = visited[rel]
    raw = _RAW_TEX.findall(obs["visible_text"])
    assert not raw, f"raw TeX left in the visible text of {rel}: {raw[:5]}"
    if obs["n_math_src"]:
        assert obs["n_math_rendered"] >= obs["n_math_src"] > 0, (rel, obs["n_math_rendered"], obs["n_math_src"])
        assert obs["mathjax_errors"] == 0


@pytest.mark.parametrize("rel", _pages())
def test_images_load(visited, rel):
    assert visited[rel]["broken_images"] == []


@pytest.mark.parametrize("rel", _pages())
def test_internal_links_and_anchors_resolve(visited, site, rel):
    for href in visited[rel]["links"]:
        if not href.startswith(site):
            continue
        target, frag = urldefrag(href)
        path = HTML / unquote(urlparse(target).path[1:])
        if path.is_dir():
            path = path / "index.html"
        assert path.exists(), f"{rel}: link to missing page {href}"
        if frag and path.suffix == ".html":
            target_rel = str(path.relative_to(HTML))
            ids = visited[target_rel]["ids"] if target_rel in visited else None
            if ids is None:
                ids = set(re.findall(r'(?:id|name)="([^"]+)"', path.read_text(encoding="utf-8")))
            assert unquote(frag) in ids, f"{rel}: anchor #{frag} missing in {target_rel}"


def test_toc_lists_every_chapter(visited):
    links = {urlparse(h).path.lstrip("/") for h in visited["book/intro.html"]["links"]}
    missing = [f for f in _toc_files() if f + ".html" not in links]
    assert not missing, f"chapters of _toc.yml missing from the navigation: {missing}"


def test_site_search_finds_a_known_term(site, browser):
    page = browser.new_page()
    page.goto(site + "search.html?q=stationary", wait_until="load")
    page.wait_for_selector("#search-results ul.search li", timeout=30_000)
    hits = page.evaluate("Array.from(document.querySelectorAll('#search-results ul.search li a')).map(a => a.href)")
    page.close()
    assert any("markov_data" in h for h in hits), hits


def test_explorers_show_their_static_figure(visited):
    for rel, obs in visited.items():
        assert all(obs["hint_has_figure"]), f"{rel}: an explorer hint without a rendered figure before it"
    chapters_with_explorers = [rel for rel, obs in visited.items() if obs["hint_has_figure"]]
    expected = [f + ".html" for f in _toc_files() if _has_explorer(ROOT / (f + ".ipynb"))]
    assert sorted(chapters_with_explorers) == sorted(expected)


def _has_explorer(nb_path: Path) -> bool:
    return nb_path.exists() and "widgets.explorer(" in nb_path.read_text(encoding="utf-8")


def test_reader_conveniences(visited):
    """Chapters offer the .ipynb download and a copy button on every code cell; labelled equations are numbered."""
    chapters = [f + ".html" for f in _toc_files() if (ROOT / (f + ".ipynb")).exists()]
    assert chapters
    for rel in chapters:
        obs = visited[rel]
        assert obs["ipynb_download"], f"{rel}: no .ipynb download link"
        assert obs["code_cells"] > 0 and obs["copy_buttons"] >= obs["code_cells"], (rel, obs["copy_buttons"])
    assert visited["book/markov_data.html"]["equation_numbers"] >= 3  # (eq-stationary), (eq-entropy-rate), ...


def _minimal_model_answer(delta, angle):
    """Part II's explorer (grq_minimal) by another route than its frame, which integrates the flow: the sheet and the
    regime from the sign of delta (Fig. 2, Sec. 3); the branch where the flow ends from the threshold cosine of
    App. A.2.5 (eq. grq-eq-cos-c) written out at the paper's unit norms: cos(beta0, beta*) < cos_c(delta) = -A^2,
    A = (delta + sqrt(delta^2 + 4)) / 2. None within 0.01 of the threshold."""
    import math

    cos, cos_c = math.cos(math.radians(angle)), -(((delta + math.sqrt(delta**2 + 4)) / 2) ** 2)
    if abs(cos - cos_c) < 0.01:
        return None
    name = ("two sheets, upstream, lazy" if delta > 0 else
            "double cone, balanced, rich" if delta == 0 else "one sheet, downstream, delayed rich")
    return f"{name}: ends on the a {'<' if cos < cos_c else '>'} 0 branch"


def _relu_answer(tau, alpha):
    """Part II's ReLU explorer (grq_relu) by another route than its frame (relu_batch.train_networks): the same draw
    trained by relu_networks.gradient_descent, the kernel distance from relu_networks.ntk and
    minimal_model.kernel_distance, the Hamming distance from the activation patterns and the test loss from mse, at
    the final weights. None where a printed digit sits within 1e-6 of a rounding boundary."""
    from markovlib.richlazy import relu_networks as RN
    from markovlib.richlazy.minimal_model import kernel_distance

    delta = tau**2 * (alpha**2 - alpha**-2)
    task = RN.teacher_student(10, 100, 50, 3, [tau], [delta], 0, n_test=100)
    X, a0, W0 = task["X"], task["a0"][0, 0], task["W0"][0, 0]
    run = RN.gradient_descent(X, task["y"], a0, W0, 5e-3 / tau**2, [1000])
    a, W = run["a"][-1], run["W"][-1]
    values = (float(RN.mse(task["X_test"], task["y_test"], a, W)),
              kernel_distance(RN.ntk(X, a0, W0), RN.ntk(X, a, W)),
              float(RN.hamming_distance(RN.activation_pattern(X, W0), RN.activation_pattern(X, W))))
    if any(abs((v * 1e3) % 1 - 0.5) < 1e-3 for v in values):
        return None
    loss, kd, ham = (f"{max(round(v, 3), 0.0):.3f}" for v in values)
    return f"test loss {loss}, S(0, T) {kd}, Hamming {ham}"


def _drift_answer(h, optimizer):
    """The closing chapter's explorer (closing_drift) by another route than its frame (conservation.run_optimizer):
    the same problems (drift_problems.laws: gradients and initializations) run by an optimizer loop written out here
    (GD, SGD with the documented minibatch draws, Adam with its default constants) to t = 2, and each law's quantity
    written out (E of Lemma 1, delta, the balances c_k); the median drift at t = 2 printed as the frame prints it.
    None where a drift sits within 1 % of a rounding boundary of its one printed digit."""
    import numpy as np

    from markovlib.beyond import drift_problems

    def quantity(law, t):
        if law == "I":
            return t[:, 0] ** 2 - t[:, 1] ** 2 - np.sign(t[:, 1]) * np.log(np.abs(t[:, 1]))
        if law == "II":
            return t[:, 0] ** 2 - (t[:, 1:] ** 2).sum(1)
        k = drift_problems.WIDTH * drift_problems.D3
        return (t[:, :k].reshape(-1, drift_problems.WIDTH, drift_problems.D3) ** 2).sum(2) - t[:, k:] ** 2

    out = []
    for law in ("I", "II", "III"):
        spec = drift_problems.laws(0)[law]
        th = spec.theta0.copy()
        q0, rng = quantity(law, th), np.random.default_rng(0)
        m, v = np.zeros_like(th), np.zeros_like(th)
        for s in range(1, int(round(2.0 / h)) + 1):
            idx = rng.choice(spec.problem.n_data, spec.batch, replace=False) if optimizer == "sgd" else None
            g = spec.problem.grad(th, idx)
            if optimizer == "adam":
                m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
                g = (m / (1 - 0.9**s)) / (np.sqrt(v / (1 - 0.999**s)) + 1e-8)
            th = th - h * g
        d = np.abs(quantity(law, th) - q0)
        drift = float(np.median(d.reshape(len(th), -1).max(axis=1)))
        mant = drift / 10 ** math.floor(math.log10(drift))
        if abs(mant - math.floor(mant) - 0.5) < 0.01 * mant:
            return None
        out.append(f"{drift:.0e}")
    return "drift at t = 2: E {}, delta {}, c_k {};".format(*out)


# Static explorers (markovlib.book.explorers): the package's own answer at a grid point, by explorer name. The frames
# show where an integrated flow ended; the answer here is where the theory says it ends (the energy, Thm 2 / Thm 8;
# the two invariants of the attention scalar), so the page and the package are compared through different routes; Part
# III's frames show Cor. 1's components and App. F's probability, the answers Thm 1's b_0 and a Student-t form.
# Each answer is a text the readout must contain, or None where the theory does not decide (near p* of the K-state
# chain, where a term of order std^2 sets the sign of Q).
def _answers():
    from markovlib.beyond.multistate import symmetric_eigenvalue
    from markovlib.markov.attention import predict_outcome
    from markovlib.markov.energy import predict_limit
    from markovlib.topology.invariant_set import poincare_polynomial

    def kstate(K, p):
        lam = symmetric_eigenvalue(int(K), p)
        return None if abs(lam) < 0.1 else ("E = 0 traps" if lam < 0 else "E = 0 is left")

    def components(d, e, l_plus, l_minus):
        # Thm 1's constant term b_0 = P(0) (the Kunneth product), not Cor. 1's case analysis that the frame shows
        c = [1.0] * int(l_plus) + [-1.0] * int(l_minus)
        return f"; components {poincare_polynomial(int(d), int(e), c)[0]};"

    def obstruction(d, l):  # noqa: E741 (the slider's name, the paper's width)
        # App. F with Student's t (scipy) instead of the F distribution of obstruction_probability
        from scipy import stats

        d, width = int(d), int(l)
        out = []
        for name, arg in (("Kaiming", width), ("Xavier", d * (width + 1) / (d + width))):
            p = 2 * stats.t.sf(arg ** 0.5, d)
            out.append(f"{name} P = {-math.expm1(width * math.log1p(-p)):.3g}")
        return ", ".join(out)

    return {
        "topo_invariant_set": components,
        "topo_obstruction": obstruction,
        "loss_landscape": lambda p, q, e0, w0: f"reached {predict_limit(e0, w0, p, q).outcome} (",
        "gradient_flow_energy": lambda p, q, e0, w0: f"reached {predict_limit(e0, w0, p, q).outcome} (",
        "attention": lambda p, q, e0, w0, a0: f"reached {predict_outcome(e0, w0, a0, p, q).outcome} (",
        "grq_minimal": _minimal_model_answer,
        "grq_relu": _relu_answer,
        "closing_drift": _drift_answer,
        "beyond_kstate": kstate,
    }


def _slider_value(label):
    """A slider's grid value from its label: a number, or the string itself (an optimizer's name)."""
    try:
        return float(label)
    except ValueError:
        return label


def _static_explorer_pages():
    return [f + ".html" for f in _toc_files()
            if (ROOT / (f + ".ipynb")).exists() and "static_explorer(" in (ROOT / (f + ".ipynb")).read_text()]


def test_every_static_explorer_has_a_package_answer():
    import json

    names = set()
    for f in _toc_files():
        nb = ROOT / (f + ".ipynb")
        if nb.exists():
            for cell in json.loads(nb.read_text())["cells"]:
                names.update(re.findall(r'name="([a-z0-9_]+)"', "".join(cell["source"]))
                             if "static_explorer(" in "".join(cell["source"]) else [])
    assert names and names <= set(_answers()), sorted(names - set(_answers()))


@pytest.mark.parametrize("rel", _static_explorer_pages())
def test_static_explorer_sliders_redraw_and_agree_with_the_package(site, browser, rel):
    """Move every slider of every explorer on the page to both ends: the frame and the sprite's offset change, the
    readout is the frame's text and names the outcome the package predicts at that grid point; no console error, no
    request leaves 127.0.0.1; a screenshot of each explorer at two slider positions goes to _build/screenshots/."""
    import json

    SHOTS.mkdir(parents=True, exist_ok=True)
    answers = _answers()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors, outside = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda r: outside.append(r.url)
            if not r.url.startswith("data:") and urlparse(r.url).hostname != "127.0.0.1" else None)
    page.goto(site + rel, wait_until="load")
    names = page.eval_on_selector_all(".mk-explorer", "(els) => els.map(e => e.dataset.name)")
    assert names, f"{rel}: no static explorer on the page"
    for name in names:
        root = f"#mk-explorer-{name}"
        page.wait_for_selector(f"{root} .mk-explorer-value", timeout=30_000)
        sliders = json.loads(page.get_attribute(root, "data-sliders"))
        values = json.loads(page.get_attribute(root, "data-values"))
        page.locator(root).scroll_into_view_if_needed()
        page.locator(root).screenshot(path=str(SHOTS / f"explorer__{name}__initial.png"))
        moves = checked = 0
        for sl in sliders:
            if len(sl["labels"]) < 2:
                continue
            for pos in (len(sl["labels"]) - 1, 0):
                before = (page.get_attribute(root, "data-frame"),
                          page.eval_on_selector(f"{root} .mk-explorer-sprite", "(el) => el.style.left + el.style.top"))
                page.eval_on_selector(f'{root} input[name="{sl["name"]}"]',
                                      f"(el) => {{ el.value = '{pos}'; el.dispatchEvent(new Event('input')); }}")
                point = {s["name"]: _slider_value(s["labels"][int(page.eval_on_selector(
                    f'{root} input[name="{s["name"]}"]', "(el) => el.value"))]) for s in sliders}
                frame = int(page.get_attribute(root, "data-frame"))
                offset = page.eval_on_selector(f"{root} .mk-explorer-sprite", "(el) => el.style.left + el.style.top")
                shown = page.inner_text(f"{root} .mk-explorer-value")
                assert shown == values[frame], (name, point, shown)
                if str(frame) != before[0]:
                    assert offset != before[1], f"{name}: the frame changed but the view did not move"
                    moves += 1
                expected = answers[name](**point)
                assert expected is None or expected in shown, (name, point, shown, expected)
                checked += expected is not None
        assert moves >= 2, f"{name}: moving the sliders changed the frame only {moves} times"
        assert checked >= 2, f"{name}: only {checked} frames compared with the package"
        page.locator(root).screenshot(path=str(SHOTS / f"explorer__{name}__moved.png"))
    page.close()
    assert not errors, f"console errors on {rel}: {errors}"
    assert not outside, f"requests leaving 127.0.0.1 on {rel}: {outside}"
