"""CI stage 6: the rendered book reads cleanly, as a reader sees it in a browser (issue 21).

Static checks always run: local MathJax, and Colab buttons that open real ``.ipynb`` files on the executable
notebooks only. When Chromium is installed, every page of ``_toc.yml`` is loaded from a loopback HTTP server in
headless Chromium at 1280 px, with a small probe script injected into the served HTML. It fails when

* a table is wider than the page's content column (cut off or scrolled sideways),
* an image in the page content is not in a figure with a numbered caption,
* the page's visible text shows a Python traceback, the data loader's "Looked in:" list, a cache path
  (``~/.cache/sslkit``, ``/root/.cache``) or a placeholder ("no quick run", "TODO", "XXX", an unrendered ``{glue``),

and the DOM of the math page must contain typeset math (``mjx-container``). A screenshot of each page is saved to
``_build/ci/screenshots`` for people to look at. ``python .ci/check_book.py notebooks/a_table1.html ...`` checks
only the pages named.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
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
    for page in toc_pages():  # Colab buttons on the executable notebooks only, each opening a committed .ipynb
        path = HTML / page
        if not path.exists():
            problems.append(f"{page} is in _toc.yml but was not built")
            continue
        links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', path.read_text())
        twin = ROOT / page.replace(".html", ".ipynb")
        if twin.exists():
            want = "/" + page.replace(".html", ".ipynb")
            if not any(link.endswith(want) for link in links):
                problems.append(f"{page} has no Colab link to {want} (found {links})")
        elif links:
            problems.append(f"{page} has a Colab button, but {twin.name} is not a notebook in the repository")
    return problems


# What a reader must never see in a page (issue 21): Python tracebacks, the data loader's "Looked in:" list, cache
# paths and unfilled placeholders. Matched against the page's rendered text (innerText: collapsed cells excluded).
LEAKS = {
    "traceback": r"Traceback \(most recent call last\)|\w+Error: .*\n.*File \"",
    "Looked in:": r"Looked in:",
    "cache path": r"/root/\.cache|~/\.cache|\.cache/sslkit|/home/[^/\s]+/\.cache",
    "placeholder": r"no quick run|no MNIST run|\bTODO\b|\bXXX\b|\{glue",
}
WIDTH = 1280  # px: the window width the reader of issue 21 used

# Injected into every served HTML page: after load (and MathJax), measure the page at this width and write the
# findings as JSON into <pre id="book-check">, which --dump-dom then returns.
PROBE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const main = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const column = main.getBoundingClientRect();
  const out = {column: Math.round(column.width), tables: [], figures: [], text: main.innerText};
  main.querySelectorAll("table").forEach((t, i) => {
    if (t.closest(".highlight, .MathJax, mjx-container")) return;
    const r = t.getBoundingClientRect();
    if (r.width === 0) return;  // inside a collapsed cell: the reader does not see it
    const first = (t.querySelector("th, td") || {}).innerText || "";
    out.tables.push({i: i, width: Math.round(r.width), right: Math.round(r.right - column.right),
                     head: first.trim().slice(0, 40)});
  });
  main.querySelectorAll("img").forEach((img, i) => {
    const r = img.getBoundingClientRect();
    if (r.width === 0) return;
    const fig = img.closest("figure, .figure, div.sd-card");
    const cap = fig && fig.querySelector("figcaption, .caption");
    const num = cap && cap.querySelector(".caption-number");
    out.figures.push({i: i, src: (img.getAttribute("src") || "").slice(-60), caption: !!cap, numbered: !!num,
                      width: Math.round(r.width)});
  });
  const pre = document.createElement("pre");
  pre.id = "book-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 3000));
</script>"""


def toc_pages() -> list[str]:
    """Every page of the book, in the order of ``_toc.yml`` (``book/x.html``, ``notebooks/y.html``)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    return [f"{f}.html" for f in files]


def page_problems(page: str, found: dict) -> list[tuple[str, str]]:
    """(kind, message) for each problem a rendered page shows: the rules of issue 21 at 1280 px."""
    out = []
    for t in found["tables"]:
        if t["right"] > 1:  # wider than the content column: cut off, or scrolled sideways
            out.append(
                (
                    "table overflow",
                    f"table {t['i']} ({t['head']!r}...) is {t['width']} px, "
                    f"{t['right']} px past the {found['column']} px column",
                )
            )
    for f in found["figures"]:
        if not f["numbered"]:
            what = "an unnumbered caption" if f["caption"] else "no caption"
            out.append(("figure caption", f"image {f['i']} ({f['src']}) has {what}"))
    for kind, pattern in LEAKS.items():
        for m in list(re.finditer(pattern, found["text"]))[:3]:
            line = found["text"][max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
            out.append((kind, f"shows {kind}: ...{line}..."))
    return out


def chromium_checks(browser: str, pages: list[str] | None = None) -> list[str]:
    """Load each page in headless Chromium at 1280 px; return the problems a reader would see (issue 21)."""

    class Probe(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the CI log readable
            pass

        def do_GET(self):  # HTML pages get the PROBE script; everything else is served as is
            path = Path(self.translate_path(self.path.split("?")[0]))
            if path.suffix != ".html" or not path.is_file():
                return super().do_GET()
            body = path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    handler = functools.partial(Probe, directory=str(HTML))
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
        f"--window-size={WIDTH},1000",
        "--virtual-time-budget=15000",
    ]
    problems = []
    counts: dict[str, int] = {}
    try:
        for page in pages or toc_pages():
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
            m = re.search(r'<pre id="book-check">(.*?)</pre>', dom, re.S)
            if not m:
                problems.append(f"{page}: the page probe did not report (page failed to load?)")
                continue
            found = json.loads(html.unescape(m.group(1)))
            mine = page_problems(page, found)
            for kind, message in mine:
                counts[kind] = counts.get(kind, 0) + 1
                problems.append(f"{page}: {message}")
            print(
                f"  chromium {page}: {dom.count('<mjx-container')} formulas, {len(found['tables'])} tables, "
                f"{len(found['figures'])} images, {len(mine)} problem(s)"
            )
    finally:
        server.shutdown()
    if counts:
        print("  problems by kind:", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return problems


#: Layout problems found by the first check over every page (a fresh no-data build, 2026-12-02) and not fixed yet:
#: each line "page | table N" or "page | image N" (issue 21 keeps them open). They are printed as KNOWN, not
#: failed; any other problem fails, so the list can only shrink. Leaks (tracebacks, paths, placeholders) are never
#: listed here.
KNOWN = ROOT / ".ci" / "book_known_layout.txt"


def known_layout() -> set[str]:
    if not KNOWN.exists():
        return set()
    lines = (line.split("#")[0].strip() for line in KNOWN.read_text().splitlines())
    return {line for line in lines if line}


def layout_key(problem: str) -> str | None:
    """``"page | table N"`` / ``"page | image N"`` of a table-overflow or caption problem, else None."""
    m = re.match(r"(\S+): (table|image) (\d+) \(", problem)
    return f"{m.group(1)} | {m.group(2)} {m.group(3)}" if m else None


def main(pages: list[str]) -> int:
    unknown = sorted(set(pages) - set(toc_pages()))
    if unknown:  # a bare name ("scorecard") used to be probed as a missing page and read as a broken one
        print(f"check_book: not pages of the book: {unknown}; pages are named as in _toc.yml, e.g. book/scorecard.html")
        return 2
    problems = static_checks()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        problems += chromium_checks(browser, pages)
    else:
        print("  chromium not installed: static HTML checks only")
    known = known_layout()
    failing = [p for p in problems if layout_key(p) not in known]
    for p in problems:
        print("FAIL:" if p in failing else "KNOWN (issue 21):", p)
    seen = {layout_key(p) for p in problems}
    for k in sorted(known - seen):
        print(f"fixed, remove from {KNOWN.name}: {k}")
    print(
        "rendered book:",
        "OK" if not failing else f"{len(failing)} problem(s)",
        f"({len(problems) - len(failing)} known layout problem(s) left)" if len(problems) > len(failing) else "",
    )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
