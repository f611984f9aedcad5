"""The pinned environments cannot drift apart: environment.yml's pip list == .ci/requirements.txt."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _requirements():
    lines = (ROOT / ".ci" / "requirements.txt").read_text().splitlines()
    return sorted(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def _environment_pip_pins():
    pins, in_pip = [], False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if re.match(r"^\s*- pip:\s*$", line):
            in_pip = True
            continue
        if in_pip:
            m = re.match(r"^\s+- (\S.*)$", line)
            if not m:
                break
            pins.append(m.group(1).strip())
    return sorted(p for p in pins if p != "-e .")


def test_environment_yml_matches_requirements():
    assert _environment_pip_pins() == _requirements()


def test_every_requirement_is_pinned_exactly():
    for req in _requirements():
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.+\-]*", req), f"not an exact pin: {req}"


def test_jupyter_book_1_and_the_torch_pair_that_imports_here():
    reqs = dict(r.split("==") for r in _requirements())
    assert reqs["jupyter-book"].startswith("1."), "Jupyter Book 2 cannot build offline"
    assert (reqs["torch"], reqs["torchvision"]) == ("2.14.1", "0.29.1")


def test_pyproject_declares_ranges_not_pins():
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"dependencies = \[(.*?)\]", text, re.S).group(1)
    assert "==" not in deps, "runtime dependencies must be ranges so Colab keeps its CUDA torch"
    assert 'sslkit = "sslkit.cli:main"' in text
