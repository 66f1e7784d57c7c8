"""A page rendered in headless Chromium, as a person would see it (the tests of the report)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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
