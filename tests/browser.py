"""A page rendered in headless Chromium, as a person would see it (the tests of the report):
screenshots and the DOM by the chromium command, and pages driven by Playwright (Debian's
chromium, its `executable_path`) where a page's script draws it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib.image
import numpy as np
import pytest


def browser_path() -> str:
    """Debian's chromium; skips where it is missing, except in CI (`make test` installs
    it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.environ.get("CI"):
        pytest.fail("chromium is missing: `make test` installs Debian's chromium")
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def _chromium(tmp: Path, *args: str, page: Path) -> str:
    """Run headless chromium on `page` with `args`; its stdout (skipped without chromium,
    `browser_path`)."""
    browser = browser_path()
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp / 'profile'}", *args,
         page.resolve().as_uri()],
        check=True, capture_output=True, text=True, timeout=120,
    )
    return done.stdout


def screenshot(page: Path, tmp: Path) -> np.ndarray:
    """The page at 1200 x 900 as an RGB(A) array."""
    shot = tmp / "shot.png"
    _chromium(tmp, f"--screenshot={shot}", "--window-size=1200,900", page=page)
    return matplotlib.image.imread(shot)


def shoot(page: Path, shot: Path, tmp: Path, *, size: tuple[int, int] = (1200, 900)
          ) -> np.ndarray:
    """The page (or image) at `size`, kept as the PNG `shot` (its path printed, for a person
    to look at) and returned as an RGB(A) array."""
    browser = browser_path()
    url = page.resolve().as_uri()
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}", f"--screenshot={shot}",
         f"--window-size={size[0]},{size[1]}", url],
        check=True, capture_output=True, text=True, timeout=120)
    print(f"screenshot: {shot}")
    return matplotlib.image.imread(shot)


def rendered_dom(page: Path, tmp: Path) -> str:
    """The page's DOM as Chromium holds it once loaded (serialized HTML)."""
    return _chromium(tmp, "--dump-dom", "--window-size=1200,900", page=page)


def colours(image: np.ndarray) -> int:
    """How many distinct colours the image holds (a blank page has one)."""
    pixels = (image[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    return len(np.unique(pixels, axis=0))


CHROMIUM = "/usr/bin/chromium"
# every <details> opened (a run page reads each topic's data then), and drawn: no "loading"
OPEN_ALL = "document.querySelectorAll('details').forEach(d => { d.open = true; })"
DRAWN = "!document.body.innerText.includes('loading ...')"


@contextmanager
def playwright_page(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A Playwright page in Debian's headless Chromium at `width` x `height` CSS pixels; the
    page's script errors fail the test. Skips where Playwright or chromium is missing,
    except in CI."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the dev extra installs it
        pytest.skip("playwright is not installed")
    browser_path = shutil.which("chromium") or CHROMIUM
    if not Path(browser_path).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: `make test` installs Debian's chromium")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    errors: list[str] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=browser_path,
                                         args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("pageerror", lambda error: errors.append(str(error)))
            yield page
        finally:
            browser.close()
    assert not errors, errors


def drawn(page: Any, path: Path, *, open_all: bool = True) -> str:
    """Go to the report page `path` and wait until its renderer has drawn it (every
    judgment, with `open_all`); its DOM, serialized."""
    page.goto(path.resolve().as_uri())
    if open_all:
        page.evaluate(OPEN_ALL)
    page.wait_for_function(DRAWN, timeout=60000)
    return str(page.content())


def drawn_dom(path: Path, width: int = 1280) -> str:
    """The report page `path` as the browser draws it, every judgment shown (serialized)."""
    with playwright_page(width) as page:
        return drawn(page, path)
