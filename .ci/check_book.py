"""CI stage 4: the rendered book shows typeset math and Colab buttons that open real ``.ipynb`` files.

Static checks always run. When Chromium is installed, pages are loaded from a loopback HTTP server in
headless Chromium: the DOM after MathJax has run must contain typeset math (``mjx-container``), and a
screenshot of each checked page is saved to ``_build/ci/screenshots`` for people to look at.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
MATH_PAGE = "book/paper_a.html"


def static_checks() -> list[str]:
    problems = []
    if not (HTML / "_static" / "mathjax" / "tex-chtml-full.js").exists():
        problems.append("local MathJax is missing from _build/html/_static/mathjax")
    page = (HTML / MATH_PAGE).read_text()
    if "_static/mathjax/tex-chtml-full.js" not in page:
        problems.append(f"{MATH_PAGE} does not load the local MathJax")
    if "cdn.jsdelivr" in page or "cdnjs" in page:
        problems.append(f"{MATH_PAGE} refers to a CDN")
    for src in sorted((ROOT / "notebooks").glob("*.md")):
        html = (HTML / "notebooks" / f"{src.stem}.html").read_text()
        links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', html)
        want = f"/notebooks/{src.stem}.ipynb"
        if not any(link.endswith(want) for link in links):
            problems.append(f"notebooks/{src.stem}.html has no Colab link to {want} (found {links})")
        elif not (ROOT / "notebooks" / f"{src.stem}.ipynb").exists():
            problems.append(f"Colab link target notebooks/{src.stem}.ipynb is not in the repository")
    return problems


def chromium_checks(browser: str) -> list[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the CI log readable
            pass

    handler = functools.partial(Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    shots = ROOT / "_build" / "ci" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
        "--virtual-time-budget=15000",
    ]
    problems = []
    pages = [MATH_PAGE] + [f"notebooks/{p.stem}.html" for p in sorted((ROOT / "notebooks").glob("*.md"))]
    try:
        for page in pages:
            with tempfile.TemporaryDirectory() as profile:
                run = [browser, *flags, f"--user-data-dir={profile}"]
                dom = subprocess.run(
                    run + ["--dump-dom", f"{base}/{page}"], capture_output=True, text=True, timeout=120
                ).stdout
                subprocess.run(
                    run + [f"--screenshot={shots / page.replace('/', '_')}.png", f"{base}/{page}"],
                    capture_output=True,
                    timeout=120,
                )
            if page == MATH_PAGE and "mjx-container" not in dom:
                problems.append(f"{page}: MathJax did not typeset any math in headless Chromium")
            print(f"  chromium {page}: {dom.count('<mjx-container')} typeset formulas")
    finally:
        server.shutdown()
    return problems


def main() -> int:
    problems = static_checks()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        problems += chromium_checks(browser)
    else:
        print("  chromium not installed: static HTML checks only")
    for p in problems:
        print("FAIL:", p)
    print("rendered book:", "OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
