"""Point the book at the repository it is published from: ``python .ci/publish.py URL [BRANCH]``.

The repository url of ``_config.yml`` is the one install source. This rewrites it (and the branch), and the
``"sslkit @ git+<url>"`` of every notebook's first cell, in the MyST source and in its ``.ipynb`` twin (a plain
text replacement: the twins keep their outputs). Then commit, push to that repository, and build and deploy the
book (README, "Publishing the book"). ``tests/test_notebooks_paired.py`` checks that every install cell uses the
url of ``_config.yml``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    if not argv or not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", argv[0].rstrip("/")):
        print("usage: python .ci/publish.py https://github.com/<org>/<repo> [branch]  (Colab opens GitHub only)")
        return 2
    url, branch = argv[0].rstrip("/").removesuffix(".git"), (argv[1] if len(argv) > 1 else None)
    config = ROOT / "_config.yml"
    text = config.read_text()
    old = re.search(r"(?m)^repository:\n(?:  .*\n)*?  url: (\S+)", text).group(1)
    text = re.sub(r"(?m)^(repository:\n(?:  .*\n)*?  url: )\S+", lambda m: m.group(1) + url, text)
    if branch:
        text = re.sub(r"(?m)^(repository:\n(?:  .*\n)*?  branch: )\S+", lambda m: m.group(1) + branch, text)
    config.write_text(text)
    changed = 0
    for path in sorted((ROOT / "notebooks").glob("*.md")) + sorted((ROOT / "notebooks").glob("*.ipynb")):
        before = path.read_text()
        after = before.replace(f"sslkit @ git+{old}", f"sslkit @ git+{url}")
        if after != before:
            path.write_text(after)
            changed += 1
    on = f" (branch {branch})" if branch else ""
    print(f"install source {old} -> {url}{on}: _config.yml and {changed} notebooks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
