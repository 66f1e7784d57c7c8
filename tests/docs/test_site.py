"""The built guide as a reader sees it: opened from disk (site/index.html, as the README says)
its pages link to each other and its search box finds pages, in headless Chromium; the
reference shows names as written (no entity in a code span, no `Sentinel.UNSET` default, no
name broken over two lines, the answer length L neither better high nor low)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from browser import browser_path

playwright = pytest.importorskip("playwright.sync_api")


def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def test_every_link_between_pages_opens_a_file_from_disk(site: Path) -> None:
    """No directory URL (`reference/cli/`, which a browser shows as a folder from disk): every
    relative link of every page names a file of the site."""
    broken, checked = [], 0
    for page in pages(site):
        for href in re.findall(r'<a [^>]*href="([^"]+)"', page.read_text(encoding="utf-8")):
            parts = urlsplit(html.unescape(href))
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            checked += 1
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href}")
    assert checked > 500 and not broken, broken[:10]


def test_the_guide_opened_from_disk_finds_pages_with_its_search_box(site: Path) -> None:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path(),
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto((site / "index.html").as_uri())
            page.click(".md-search__input")
            page.wait_for_function(
                "() => !document.querySelector('.md-search-result__meta')"
                ".textContent.includes('Initializing')", timeout=30_000)
            page.keyboard.type("Bradley", delay=20)
            page.wait_for_selector(".md-search-result__item", timeout=30_000)
            found = page.locator(".md-search-result__item a").first.get_attribute("href")
        finally:
            browser.close()
    assert found is not None and found.startswith("file://")
    assert Path(unquote(urlsplit(found).path)).is_file()
    assert all(url.startswith(("file://", "about:", "data:")) for url in requests), requests


def test_reference_names_are_shown_as_written(site: Path) -> None:
    built = {p: p.read_text(encoding="utf-8") for p in pages(site)}
    shown_entities = [str(p.relative_to(site)) for p, text in built.items() if "&amp;#" in text]
    assert not shown_entities  # an entity inside a code span shows literally: run&#95;batch
    cli = built[site / "reference" / "cli.html"]
    assert "<code>run_batch -o</code>" in cli and "Sentinel" not in cli
    methods = built[site / "reference" / "methods.html"]
    row = re.search(r"<td><code>L</code></td>(.*?)</tr>", methods, re.S)
    assert row is not None and "neither (descriptive)" in row.group(1)


@pytest.mark.parametrize("page", ["reference/methods.html", "reference/cli.html",
                                  "reference/environment.html"])
def test_names_in_the_reference_tables_stay_on_one_line(site: Path, page: str) -> None:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path(),
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1000, "height": 800})
            tab.goto((site / page).as_uri())
            names, broken = tab.evaluate(
                """() => {
                  const codes = [...document.querySelectorAll(
                      '.md-typeset table td:first-child code')];
                  return [codes.length, codes.filter(c => c.getClientRects().length > 1)
                                             .map(c => c.textContent)];
                }""")
        finally:
            browser.close()
    assert names > 20 and broken == []
