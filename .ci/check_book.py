"""CI stage 6: the rendered book reads cleanly, on a laptop and on a phone, as a reader sees it in a browser.

Static checks always run: the local MathJax components, no CDN, no fontawesome JavaScript, and Colab buttons that
open real ``.ipynb`` files on the executable notebooks only. When Chromium is installed, one headless Chromium is
driven over the DevTools protocol (``--remote-debugging-pipe``: no extra Python package) and loads every page of
``_toc.yml`` from a loopback HTTP server, cold (cache disabled), at 1280 px and at 390 px wide. It fails when

* an element is wider than the content column (``article.bd-article``), by this rule:

  - **code** (``div.highlight pre``): fits the column at 1280 px; at 390 px it may scroll inside its own box (the
    box must fit). A shown code line longer than 88 columns fails at any width (``SHOWN_COLUMNS``);
  - **printed output** (cell outputs, ``.output pre``): wraps (book/_vendor/sslkit.css), so it never scrolls;
  - **display equations** (MathJax CHTML ``mjx-container[display]``): fit at 1280 px; at 390 px a long equation may
    scroll inside its own box, and an equation number (``span.eqno``) must never overlap its equation;
  - **tables**: fit at 1280 px; at 390 px a wide table may scroll inside a wrapper that fits;
  - **images**: fit at both widths (``max-width: 100%``);
  - the page itself never scrolls sideways;

  "scroll inside its own box" means the element, or an ancestor inside the column, has ``overflow-x: auto`` or
  ``scroll`` and that box fits the column; anything else past the column's right edge is cut off or pushes the page;
* an image in the page content is not in a figure with a numbered caption;
* the page's visible text shows a Python traceback, the data loader's "Looked in:" list, a cache path
  (``~/.cache/sslkit``, ``/root/.cache``) or a placeholder ("no quick run", "TODO", "XXX", an unrendered ``{glue``),
  or the page shows a stderr output block (``div.output.stderr``: a build without data must not leak);
* a cold load of the page (every resource the browser fetches with an empty cache: HTML, CSS, scripts, fonts,
  images, and the images a lazy load fetches as the reader scrolls) weighs more than ``MAX_BYTES`` (1.5 MB) over the
  wire -- the loopback server compresses text with gzip, as GitHub Pages and every static host do -- or more than
  ``MAX_RAW`` (2.5 MB) as files (uncompressed; a heavy script fails here even where it compresses well).

Each page's cold-load weight is printed (both numbers), with its heaviest resources when it fails. The DOM of the
math page must contain typeset math (``mjx-container``).
Screenshots of each page at both widths are saved to ``_build/ci/screenshots`` for people to look at.
``python .ci/check_book.py notebooks/a_table1.html ...`` checks only the pages named. ``--html DIR`` checks a book
built elsewhere (a reduced ``_toc.yml`` in that folder's parent is used for the list of pages). ``--write-known``
writes the layout problems found into ``.ci/book_known_layout.txt`` (to merge before the pages are fixed).
"""

from __future__ import annotations

import base64
import functools
import gzip
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
MATH_PAGE = "book/paper_a.html"
MATHJAX = "mathjax/startup.js"  # _config.yml's mathjax_path: the MathJax components the book needs, not the full
WIDTHS = (1280, 390)  # px: a laptop, a phone (issue 21's reader used 1280 px)
HEIGHT = 900
SHOWN_COLUMNS = 88  # the longest line of shown code (ruff's line length is for the library, 120)
MAX_BYTES = 1_500_000  # a page's cold load: bytes over the wire from a host that gzips text, all resources
MAX_RAW = 2_500_000  # the same resources as files (uncompressed): catches a heavy script even where it compresses
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".txt", ".map", ".xml"}  # what static hosts gzip

# What a reader must never see in a page (issue 21): Python tracebacks, the data loader's "Looked in:" list, cache
# paths and unfilled placeholders. Matched against the page's rendered text (innerText: collapsed cells excluded).
LEAKS = {
    "traceback": r"Traceback \(most recent call last\)|\w+Error: .*\n.*File \"",
    "Looked in:": r"Looked in:",
    "cache path": r"/root/\.cache|~/\.cache|\.cache/sslkit|/home/[^/\s]+/\.cache",
    "placeholder": r"no quick run|no MNIST run|\bTODO\b|\bXXX\b|\{glue",
}


def static_checks(html_dir: Path, pages: list[str]) -> list[str]:
    problems = []
    if not (html_dir / "_static" / MATHJAX).exists():
        problems.append(f"local MathJax is missing: _static/{MATHJAX}")
    if (html_dir / MATH_PAGE).exists():
        page = (html_dir / MATH_PAGE).read_text()
        if f"_static/{MATHJAX}" not in page:
            problems.append(f"{MATH_PAGE} does not load the local MathJax (_static/{MATHJAX})")
        if "cdn.jsdelivr" in page or "cdnjs" in page:
            problems.append(f"{MATH_PAGE} refers to a CDN")
    for page in pages:  # Colab buttons on the executable notebooks only, each opening a committed .ipynb
        path = html_dir / page
        if not path.exists():
            problems.append(f"{page} is in _toc.yml but was not built")
            continue
        text = path.read_text()
        if "fontawesome.js" in text:
            problems.append(f"{page} loads fontawesome.js (1.5 MB; book/_ext/light_page.py drops it)")
        links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', text)
        twin = ROOT / page.replace(".html", ".ipynb")
        if twin.exists():
            want = "/" + page.replace(".html", ".ipynb")
            if not any(link.endswith(want) for link in links):
                problems.append(f"{page} has no Colab link to {want} (found {links})")
        elif links:
            problems.append(f"{page} has a Colab button, but {twin.name} is not a notebook in the repository")
    return problems


# Evaluated in the loaded page (after MathJax has typeset and the fonts have loaded): the findings as one object.
# "box" of an element = the element itself, or its nearest ancestor inside the column that scrolls sideways
# (overflow-x auto/scroll); "past" = how many px the box reaches beyond the column's right (or left) edge.
PROBE = r"""(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  await new Promise(r => setTimeout(r, 300));
  await document.fonts.ready;
  const main = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const box = main.getBoundingClientRect(), st = getComputedStyle(main);  // the column: the article's content box
  const col = {left: box.left + parseFloat(st.paddingLeft), right: box.right - parseFloat(st.paddingRight)};
  col.width = col.right - col.left;
  const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const past = r => Math.round(Math.max(r.right - col.right, col.left - r.left));
  const measure = (e, i) => {
    const r = e.getBoundingClientRect(), right = r.left + Math.max(r.width, e.scrollWidth);  // where its content ends
    let a = e, ox = "visible";
    for (; a && a !== main; a = a.parentElement) if ((ox = getComputedStyle(a).overflowX) !== "visible") break;
    const m = {i: i, width: Math.round(right - r.left), head: (e.textContent || "").trim().split("\n")[0].slice(0, 40),
               past: Math.round(Math.max(right - col.right, col.left - r.left)), scrolled: false, cut: 0};
    m.box_past = m.past;
    if (a && a !== main && ox !== "visible") {  // a box that scrolls or clips: it must fit, its content may not
      const br = a.getBoundingClientRect();
      m.box_past = past(br);
      if (right > br.right + 1) {
        if (ox === "auto" || ox === "scroll") m.scrolled = true;
        else m.cut = Math.round(right - br.right);
      }
    }
    return m;
  };
  const doc = document.documentElement;
  const culprit = () => {  // the outermost element of the article that reaches past the window (not in a scroll box)
    for (const e of main.querySelectorAll("*")) {
      const r = e.getBoundingClientRect();
      if (!(r.width > 0 && r.right > doc.clientWidth + 1)) continue;
      let free = true;
      for (let p = e.parentElement; p && free; p = p.parentElement)
        free = getComputedStyle(p).overflowX === "visible" && p.getBoundingClientRect().right <= doc.clientWidth + 1;
      if (free) return `${e.tagName.toLowerCase()}.${String(e.className).split(" ")[0]} ` +
                       `${JSON.stringify((e.textContent || "").trim().slice(0, 50))}`;
    }
    return "";
  };
  const out = {column: Math.round(col.width), page_scroll: doc.scrollWidth - doc.clientWidth,
               code: [], output: [], equations: [], tables: [], figures: [], stderr: 0, text: main.innerText,
               math: document.querySelectorAll("mjx-container").length,
               images: [...document.images].map(i => i.currentSrc || i.src)};
  main.querySelectorAll("div.highlight pre").forEach((e, i) => {
    if (!visible(e) || e.closest(".output, .cell_output")) return;
    const m = measure(e, i);
    m.columns = Math.max(...e.textContent.split("\n").map(l => l.length));
    out.code.push(m);
  });
  main.querySelectorAll(".cell_output pre, .output pre").forEach((e, i) => {
    if (visible(e)) out.output.push(measure(e, i));
  });
  main.querySelectorAll("mjx-container[display]").forEach((e, i) => {
    if (!visible(e)) return;
    const m = measure(e, i), math = e.closest("div.math"), no = math && math.querySelector(".eqno");
    const doc = window.MathJax && MathJax.startup && MathJax.startup.document;  // the TeX source names it
    const items = doc && doc.getMathItemsWithin ? doc.getMathItemsWithin(e) : [];
    m.head = items.length ? String(items[0].math).trim().slice(0, 40) : "";
    if (no && visible(no)) {
      const a = e.getBoundingClientRect(), n = no.getBoundingClientRect();
      const inner = e.querySelector("mjx-math") || e, c = inner.getBoundingClientRect();
      const x = Math.max(a.left, c.left), y = Math.min(a.right, c.right);  // the math's visible span
      m.overlap = Math.round(Math.max(0, Math.min(y, n.right) - Math.max(x, n.left)));
    }
    out.equations.push(m);
  });
  main.querySelectorAll("table").forEach((t, i) => {
    if (t.closest(".highlight, mjx-container") || !visible(t)) return;
    const m = measure(t, i);
    m.head = ((t.querySelector("th, td") || {}).innerText || "").trim().slice(0, 40);
    out.tables.push(m);
  });
  main.querySelectorAll("img").forEach((img, i) => {
    if (!visible(img)) return;
    const fig = img.closest("figure, .figure, div.sd-card");
    const cap = fig && fig.querySelector("figcaption, .caption");
    const m = measure(img, i);
    Object.assign(m, {src: (img.getAttribute("src") || "").slice(-60), caption: !!cap,
                      numbered: !!(cap && cap.querySelector(".caption-number"))});
    out.figures.push(m);
  });
  out.culprit = out.page_scroll > 1 ? culprit() : "";
  main.querySelectorAll(".output.stderr").forEach(e => { if (visible(e)) out.stderr += 1; });
  return out;
})()"""


def width_problems(width: int, found: dict) -> list[tuple[str, str]]:
    """(kind, message) for each element wider than the column at this window width (the rule in the docstring)."""
    out = []
    phone = width < 800
    may_scroll = {"code": phone, "output": False, "equation": phone, "table": phone, "image": False}
    for kind, items in [
        ("code", found["code"]),
        ("output", found["output"]),
        ("equation", found["equations"]),
        ("table", found["tables"]),
        ("image", found["figures"]),
    ]:
        for e in items:
            what = f"{kind} {e['i']} ({e['head']!r}...)"
            if e["box_past"] > 1:  # its box (itself, or its scrolling wrapper) reaches past the column: cut off
                out.append(("overflow", f"{width}px {what} is {e['width']} px, {e['box_past']} px past the column"))
            elif e["cut"] > 1:
                out.append(("overflow", f"{width}px {what} is cut off: {e['cut']} px of it hidden by its box"))
            elif e["scrolled"] and not may_scroll[kind]:
                rule = "wraps" if kind == "output" else "fits"
                out.append(
                    ("overflow", f"{width}px {what} is {e['width']} px and scrolls inside its box ({kind} {rule})")
                )
            if e.get("overlap", 0) > 1:
                out.append(("overflow", f"{width}px {what}: its number overlaps it by {e['overlap']} px"))
            if kind == "code" and width == WIDTHS[0] and e["columns"] > SHOWN_COLUMNS:
                out.append(("long code", f"{width}px {what} has a line of {e['columns']} > {SHOWN_COLUMNS} columns"))
    if found["page_scroll"] > 1:
        out.append(("overflow", f"{width}px page scrolls sideways by {found['page_scroll']} px ({found['culprit']})"))
    return out


def page_problems(width: int, found: dict) -> list[tuple[str, str]]:
    """(kind, message) for each problem a rendered page shows at this width."""
    out = width_problems(width, found)
    if width != WIDTHS[0]:
        return out
    for f in found["figures"]:
        if not f["numbered"]:
            what = "an unnumbered caption" if f["caption"] else "no caption"
            out.append(("figure caption", f"image {f['i']} ({f['src']}) has {what}"))
    for kind, pattern in LEAKS.items():
        for m in list(re.finditer(pattern, found["text"]))[:3]:
            line = found["text"][max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
            out.append((kind, f"shows {kind}: ...{line}..."))
    if found["stderr"]:
        out.append(("stderr", f"shows {found['stderr']} stderr output block(s)"))
    return out


class Chromium:
    """One headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4 of the browser)."""

    def __init__(self, browser: str):
        self.profile = tempfile.mkdtemp(prefix="check_book_")
        to_browser, self._w = os.pipe()
        self._r, from_browser = os.pipe()

        def pipes():  # in the child: the protocol's fds 3 (commands in) and 4 (replies out)
            a, b = os.dup(to_browser), os.dup(from_browser)
            os.dup2(a, 3)
            os.dup2(b, 4)

        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
        flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
        flags += ["--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"]
        self.proc = subprocess.Popen(
            [browser, *flags], preexec_fn=pipes, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buf, self._id, self.events = b"", 0, []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for method in ("Page.enable", "Network.enable"):
            self.send(method, session=True)
        self.send("Network.setCacheDisabled", cacheDisabled=True, session=True)  # every load is a cold load

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if not select.select([self._r], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, session: bool = False, timeout: float = 60, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait(self, event: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == event:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))

    def load(self, url: str, width: int) -> tuple[dict, dict[str, int]]:
        """Load ``url`` cold in a ``width`` px window: the probe's findings and the bytes fetched per url."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=HEIGHT,
            deviceScaleFactor=1,
            mobile=width < 800,
        )
        self.events.clear()
        self.send("Page.navigate", session=True, url=url)
        self.wait("Page.loadEventFired")
        found = self.send(
            "Runtime.evaluate", session=True, timeout=90, expression=PROBE, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in found:
            raise RuntimeError(f"probe failed on {url}: {found['exceptionDetails']}")
        urls, fetched = {}, {}
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Network.responseReceived":
                urls[p["requestId"]] = p["response"]["url"]
            elif e.get("method") == "Network.loadingFinished" and p["requestId"] in urls:
                fetched[urls[p["requestId"]]] = int(p["encodedDataLength"])
        return found["result"]["value"], fetched

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


def cold_load_bytes(fetched: dict[str, int], images: list[str], html_dir: Path) -> tuple[int, int]:
    """(bytes over the wire, bytes as files) of a cold load: what was fetched, plus the page's images not fetched
    yet (a lazy load fetches them as the reader scrolls), counted from disk."""

    def on_disk(url: str) -> int:
        path = html_dir / unquote(urlparse(url).path).lstrip("/")
        return path.stat().st_size if url.startswith("http://127.0.0.1") and path.is_file() else 0

    lazy = sum(on_disk(src) for src in set(images) - set(fetched))
    return sum(fetched.values()) + lazy, sum(on_disk(u) for u in fetched) + lazy


def chromium_checks(browser: str, pages: list[str], html_dir: Path) -> tuple[list[str], dict[str, int]]:
    """Load each page cold at each width; return the problems a reader would see and each page's weight."""

    class Host(http.server.SimpleHTTPRequestHandler):
        """Serves the book as a static host does (GitHub Pages, Read the Docs): text gzip-compressed on request."""

        def log_message(self, *args):  # keep the CI log readable
            pass

        def do_GET(self):
            path = Path(self.translate_path(self.path.split("?")[0]))
            gzip_ok = "gzip" in self.headers.get("Accept-Encoding", "")
            if path.suffix not in COMPRESSED or not path.is_file() or not gzip_ok:
                return super().do_GET()
            body = gzip.compress(path.read_bytes(), 6)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Host, directory=str(html_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    shots = ROOT / "_build" / "ci" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    problems, counts, weights, raws, heavy = [], {}, {}, {}, {}
    chrome = Chromium(browser)
    try:
        for page in pages:
            if not (html_dir / page).exists():
                continue  # static_checks reports it
            mine, notes = [], []
            for width in WIDTHS:
                try:
                    found, fetched = chrome.load(f"{base}/{page}", width)
                except (RuntimeError, TimeoutError, OSError) as err:
                    problems.append(f"{page}: the page probe did not report at {width} px ({err})")
                    chrome.close()  # a fresh browser for the next page: this one may have hung or died
                    chrome = Chromium(browser)
                    continue
                chrome.screenshot(shots / f"{page.replace('/', '_')}_{width}.png")
                weight, raw = cold_load_bytes(fetched, found["images"], html_dir)
                if weight > weights.get(page, 0):
                    weights[page], raws[page] = weight, raw
                    heavy[page] = sorted(fetched.items(), key=lambda kv: -kv[1])[:6]
                if page == MATH_PAGE and not found["math"]:
                    problems.append(f"{page}: MathJax did not typeset any math in headless Chromium ({width} px)")
                mine += page_problems(width, found)
                notes.append(
                    f"{width}px: column {found['column']}, {len(found['code'])} code, {len(found['output'])} "
                    f"outputs, {len(found['equations'])} equations, {len(found['tables'])} tables, "
                    f"{len(found['figures'])} images, {weight / 1e6:.2f} MB ({raw / 1e6:.2f} MB as files)"
                )
            if weights.get(page, 0) > MAX_BYTES or raws.get(page, 0) > MAX_RAW:
                top = ", ".join(f"{urlparse(u).path.rsplit('/', 1)[-1]} {n / 1e3:.0f} kB" for u, n in heavy[page])
                mine.append(
                    (
                        "weight",
                        f"cold load {weights[page] / 1e6:.2f} MB (limit {MAX_BYTES / 1e6:.1f}), "
                        f"{raws[page] / 1e6:.2f} MB as files (limit {MAX_RAW / 1e6:.1f}); heaviest: {top}",
                    )
                )
            for kind, message in mine:
                counts[kind] = counts.get(kind, 0) + 1
                problems.append(f"{page}: {message}")
            print(f"  chromium {page}: {'; '.join(notes)}; {len(mine)} problem(s)")
    finally:
        chrome.close()
        server.shutdown()
    if counts:
        print("  problems by kind:", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return problems, weights, raws


def toc_pages(toc_file: Path) -> list[str]:
    """Every page of the book, in the order of ``_toc.yml`` (``book/x.html``, ``notebooks/y.html``)."""
    import yaml

    toc = yaml.safe_load(toc_file.read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    return [f"{f}.html" for f in files]


#: Layout problems not fixed yet, one per line: "page | problem" with the problem's text up to its first " (" or
#: ":" after the element (e.g. "notebooks/x.html | 390px table 3"). They are printed as KNOWN, not failed; any
#: other problem fails, so the list can only shrink. Leaks (tracebacks, paths, placeholders, stderr) and weights
#: are never listed here. The list is empty: every layout problem fails.
KNOWN = ROOT / ".ci" / "book_known_layout.txt"


def known_layout() -> set[str]:
    if not KNOWN.exists():
        return set()
    lines = (line.split("#")[0].strip() for line in KNOWN.read_text().splitlines())
    return {line for line in lines if line}


def layout_key(problem: str) -> str | None:
    """``"page | 390px table 3"`` of a width problem, ``"page | image 2"`` of a caption problem, else None."""
    m = re.match(r"(\S+): (\d+px (?:code|output|equation|table|image) \d+|\d+px page|image \d+) ", problem)
    return f"{m.group(1)} | {m.group(2)}" if m else None


def main(argv: list[str]) -> int:
    html_dir, write_known = HTML, "--write-known" in argv
    argv = [a for a in argv if a != "--write-known"]
    if argv[:1] == ["--html"]:
        html_dir, argv = Path(argv[1]).absolute(), argv[2:]
    toc_file = html_dir.parents[1] / "_toc.yml" if (html_dir.parents[1] / "_toc.yml").exists() else ROOT / "_toc.yml"
    book = toc_pages(toc_file)
    unknown = sorted(set(argv) - set(book))
    if unknown:  # a bare name ("scorecard") used to be probed as a missing page and read as a broken one
        print(f"check_book: not pages of the book: {unknown}; pages are named as in _toc.yml, e.g. book/scorecard.html")
        return 2
    pages = argv or book
    t0 = time.monotonic()
    problems = static_checks(html_dir, pages)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    weights, raws = {}, {}
    if browser:
        found, weights, raws = chromium_checks(browser, pages, html_dir)
        problems += found
    else:
        print("  chromium not installed: static HTML checks only")
    known = known_layout()
    if write_known:  # record today's layout problems as known (to merge before the pages are fixed; shrink it)
        keys = sorted({k for p in problems if (k := layout_key(p))})
        head = [line for line in KNOWN.read_text().splitlines() if line.startswith("#")] if KNOWN.exists() else []
        KNOWN.write_text("\n".join(head + keys) + "\n")
        known = set(keys)
        print(f"wrote {len(keys)} known layout problem(s) to {KNOWN}")
    failing = [p for p in problems if layout_key(p) not in known]
    for p in problems:
        print("FAIL:" if p in failing else "KNOWN:", p)
    seen = {layout_key(p) for p in problems}
    for k in sorted(known - seen):
        print(f"fixed, remove from {KNOWN.name}: {k}")
    if weights:
        heaviest = max(weights, key=weights.get)
        print(
            f"cold load: {min(weights.values()) / 1e6:.2f}-{weights[heaviest] / 1e6:.2f} MB a page over the wire "
            f"(limit {MAX_BYTES / 1e6:.1f} MB), {min(raws.values()) / 1e6:.2f}-{max(raws.values()) / 1e6:.2f} MB "
            f"as files (limit {MAX_RAW / 1e6:.1f} MB); heaviest {heaviest}; {len(pages)} pages x {len(WIDTHS)} "
            f"widths in {time.monotonic() - t0:.0f} s"
        )
    print(
        "rendered book:",
        "OK" if not failing else f"{len(failing)} problem(s)",
        f"({len(problems) - len(failing)} known layout problem(s) left)" if len(problems) > len(failing) else "",
    )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
