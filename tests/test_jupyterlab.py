"""The Jupyter reader's path (issue 34, item 8): a chapter opened in JupyterLab, with the book's requirements
(jupyterlab-myst renders MyST; ipywidgets' extension draws the explorers), run top to bottom, shows its summary's
numbers and no raw MyST role, and its live explorer redraws when a slider moves.

A JupyterLab server on 127.0.0.1 (a random token, no update checks, the app exposed to the page's scripts) serves a
copy of the chapter; Debian's Chromium, driven by Playwright, opens it, runs every cell, reads the summary that the
chapter's ``summary(...)`` cell shows, moves the explorer's slider p from 0.90 to 0.93 and compares the figure
before and after.
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from own_thread import run_in_own_thread

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
CHAPTER = "loss_landscape"  # a light chapter with a live explorer over (p, q)

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(),
                                 reason="Debian's chromium is not installed (.ci/run installs it)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a copy of the book's folder (the chapter, its data), at http://127.0.0.1:port."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "book", work / "book", ignore=shutil.ignore_patterns("*.py", "_build", "ci_params"))
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=", "--ServerApp.open_browser=False",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI runs as root
        cmd.append("--allow-root")
    log = open(work / "lab.log", "w")
    env = {k: v for k, v in os.environ.items() if k != "MARKOVLIB_BATCH"}  # a live session: explorers are widgets
    env["PYTHONPATH"] = str(ROOT)  # the kernel imports this checkout's markovlib
    # render every cell (JupyterLab 4 attaches only the cells in view by default), so the page holds them all
    settings = work / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env["JUPYTERLAB_SETTINGS_DIR"] = str(work / "settings")
    proc = subprocess.Popen(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("jupyter lab exited: " + (work / "lab.log").read_text()[-2000:])
                time.sleep(0.5)
        yield url, token, work
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _figure(page) -> str:
    """The explorer's current figure: the image of the output area that holds the slider."""
    return page.evaluate("""() => {
        const slider = [...document.querySelectorAll('.widget-slider')].find(
            s => (s.querySelector('.widget-label') || {}).textContent === 'p');
        const box = slider.closest('.jp-OutputArea-output, .jp-OutputArea');
        const img = box.querySelector('img');
        return img ? img.src : '';
    }""")


def test_a_chapter_run_in_jupyterlab_shows_its_numbers_and_its_explorer_redraws(lab):
    # Playwright's sync API refuses a thread whose asyncio loop is running (test_browser's session browser may
    # hold one open in this xdist worker): drive the browser from a thread of its own
    url, token, _ = lab
    run_in_own_thread(_drive_the_lab, url, token)


def _drive_the_lab(url, token):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/lab/tree/book/{CHAPTER}.ipynb?token={token}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                               "&& window.jupyterapp.shell.currentWidget.sessionContext "
                               "&& window.jupyterapp.shell.currentWidget.sessionContext.session "
                               "&& window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                               timeout=120_000)
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                               ".status === 'idle'", timeout=120_000)
        # forget the committed outputs and counts first, so that "every cell has a count" means "every cell ran"
        page.evaluate("""() => { const nb = window.jupyterapp.shell.currentWidget;
            nb.content.widgets.filter(c => c.model.type === 'code').forEach(c => {
                c.model.outputs.clear(); c.model.executionCount = null; }); }""")
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        # every code cell has run once the last one has an execution count and the kernel is idle again
        page.wait_for_function("""() => {
            const nb = window.jupyterapp.shell.currentWidget;
            const cells = nb.content.widgets.filter(c => c.model.type === 'code');
            const last = cells[cells.length - 1];
            return cells.every(c => c.model.executionCount !== null) && last.model.outputs.length > 0
                && nb.sessionContext.session.kernel.status === 'idle';
        }""", timeout=600_000, polling=2000)
        errors = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
            .filter(c => c.model.type === 'code')
            .flatMap(c => { const o = c.model.outputs; const out = [];
                for (let i = 0; i < o.length; i++) if (o.get(i).type === 'error') out.push(o.get(i).toJSON());
                return out; })""")
        assert errors == [], errors

        # the summary with this run's numbers: no raw role left, and the numbers of the glued statistics in it
        cell = page.evaluate("""() => {
            const cells = window.jupyterapp.shell.currentWidget.content.widgets;
            const c = cells.find(c => c.model.type === 'code'
                && c.model.sharedModel.getSource().includes('glue import summary'));
            const area = c.node.querySelector('.jp-OutputArea');
            return {text: area ? area.innerText : '', outputs: c.model.outputs.toJSON(),
                    html: area ? area.innerHTML.slice(0, 1500) : ''};
        }""")
        summary = cell["text"]
        assert "What this chapter shows, with this run" in summary, cell  # MyST typesets the apostrophe
        for raw in ("{glue:", "{prf:", "{cite:", "{doc}", "not computed in this run"):
            assert raw not in summary, (raw, summary[:500])
        assert any(ch.isdigit() for ch in summary)
        # the summary section as jupyterlab-myst renders the markdown cell: no raw role syntax either
        rendered = page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell')]
            .map(e => e.innerText).find(t => t.includes('What this chapter shows')) || ''""")
        assert rendered and "{glue:text}" not in rendered and "{prf:ref}" not in rendered, rendered[:500]

        # the live explorer: p from 0.90 to 0.93 redraws the figure
        page.evaluate("""() => { const s = [...document.querySelectorAll('.widget-slider')].find(
            s => (s.querySelector('.widget-label') || {}).textContent === 'p'); s.scrollIntoView(); }""")
        before = _figure(page)
        assert before.startswith("data:image/png"), before[:80]
        label = page.locator(".widget-label", has_text=re.compile(r"^p$"))
        readout = page.locator(".widget-slider", has=label).locator(".widget-readout").first
        for value in ("0.90", "0.93"):
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type(value)
            page.keyboard.press("Enter")
            page.wait_for_timeout(500)
            page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                                   ".status === 'idle'", timeout=120_000)
            page.wait_for_timeout(1000)
            if value == "0.90":
                before = _figure(page)
        after = _figure(page)
        assert after.startswith("data:image/png") and after != before, "moving p did not redraw the explorer"
        browser.close()
