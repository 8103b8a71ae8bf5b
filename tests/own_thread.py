"""Run a function in a thread of its own and re-raise its exception in the caller's thread.

Playwright's sync API refuses a thread whose asyncio loop is running. ``tests/test_browser.py`` holds one browser
open for the whole session (its loop stays running in the worker's main thread), so any other browser test that
xdist places in the same worker must drive Playwright from a fresh thread.
"""
from __future__ import annotations

import threading


def run_in_own_thread(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` in a new thread; return its result or raise its exception here."""
    result, errors = [], []

    def target():
        try:
            result.append(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]
