"""Screenshots of what a new user meets (issue 37): the game page, the deeper engine and the lens, at
1400 px and on a phone (390 px), on a game no test uses (the Immortal Game), from a real ``serve``.

It starts ``manage.py serve`` on a new data folder (as ``bench/serve_start.py`` does), submits the game
with the home form's defaults, waits for the analysis to finish, then drives Chromium through the three
views at both widths.

    .venv/bin/python bench/page_shots.py [--out docs/img/shots] [--node 35]

Writes ``<out>/{game,deeper,lens}-{1400,390}.png`` and prints the seconds each step took.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serve_start import Site  # noqa: E402

# Anderssen - Kieseritzky, London 1851 ("the Immortal Game").
IMMORTAL = """[Event "London"]
[White "Adolf Anderssen"]
[Black "Lionel Kieseritzky"]
[Result "1-0"]

1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 5. Bxb5 Nf6 6. Nf3 Qh6 7. d3 Nh5 8. Nh4 Qg5 9. Nf5 c6
10. g4 Nf6 11. Rg1 cxb5 12. h4 Qg6 13. h5 Qg5 14. Qf3 Ng8 15. Bxf4 Qf6 16. Nc3 Bc5 17. Nd5 Qxb2
18. Bd6 Bxg1 19. e5 Qxa1+ 20. Ke2 Na6 21. Nxg7+ Kd8 22. Qf6+ Nxf6 23. Be7# 1-0
"""
WIDTHS = {1400: {"width": 1400, "height": 900}, 390: {"width": 390, "height": 844}}
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
DONE = ("done", "failed", "cancelled")


def wait_done(site: Site, job: str, limit_s: float = 900.0) -> str:
    """The job's final status (polling its API)."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        with site.opener.open(f"{site.base}api/jobs/{job}/", timeout=30) as response:
            status = json.loads(response.read())["job"]["status"]
        if status in DONE:
            return status
        time.sleep(1)
    raise RuntimeError(f"job {job} not finished within {limit_s:.0f} s")


def save(page, path: Path, whole: bool) -> None:
    """A screenshot, kept small: 256 colours are plenty for the site's flat colours."""
    from PIL import Image

    page.screenshot(path=str(path), full_page=whole)
    Image.open(path).convert("RGB").quantize(256).save(path, optimize=True)


def shoot(browser, url: str, node: int, out: Path) -> dict[str, float]:
    """The three views at each width; seconds per view."""
    timings = {}
    for width, viewport in WIDTHS.items():
        page = browser.new_page(viewport=viewport)
        start = time.monotonic()
        page.goto(f"{url}#{node}")
        page.wait_for_function("(n) => window.__sightline && window.__sightline.current === n", arg=node)
        page.wait_for_function("window.Plotly && document.querySelector('#eval-graph .scatterlayer')", timeout=60_000)
        save(page, out / f"game-{width}.png", width == 390)
        timings[f"game-{width}"] = time.monotonic() - start

        start = time.monotonic()
        page.select_option("#engine-deeper-count", "3")
        page.click("#engine-deeper-start")
        page.wait_for_function("(n) => (window.__sightline.engineDeeper.byNode.get(n)?.depth || 0) >= 18", arg=node,
                               timeout=120_000)
        page.wait_for_function("document.querySelectorAll('#engine-deeper-lines li').length === 3", timeout=60_000)
        page.locator("#engine-deeper-lines").scroll_into_view_if_needed()
        save(page, out / f"deeper-{width}.png", width == 390)
        if page.is_visible("#engine-deeper-stop"):
            page.click("#engine-deeper-stop")
        timings[f"deeper-{width}"] = time.monotonic() - start

        start = time.monotonic()
        page.click("#lens-open")
        page.wait_for_function("document.querySelectorAll('#lens-strip .lens-cell').length > 0", timeout=120_000)
        page.wait_for_function("document.querySelectorAll('#lens-grid td').length > 0", timeout=300_000)
        page.locator("#lens").scroll_into_view_if_needed()
        save(page, out / f"lens-{width}.png", width == 390)
        timings[f"lens-{width}"] = time.monotonic() - start
        page.close()
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "shots")
    parser.add_argument("--node", type=int, default=35, help="the position shown (35: after 18. Bd6, the sacrifices)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="sightline-shots-"))
    site = Site(ROOT, folder / "var", folder / "serve.log", ply_limit_s=900.0)
    try:
        _, page = site.first_answer()
        job = site.submit(page, IMMORTAL)
        status = wait_done(site, job)
        print(f"analysis {status} at {site.since_start()} s after start", flush=True)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_FLAGS)
            timings = shoot(browser, f"{site.base}jobs/{job}/", args.node, args.out)
            browser.close()
        print(json.dumps({k: round(v, 1) for k, v in timings.items()}))
    finally:
        site.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
