"""The wheel a user installs: built from the sources, installed into a clean virtual environment (``--no-deps``, the
dependencies taken from this environment's site-packages), then ``sslkit list``, ``sslkit --help`` and the README's
library examples run against it from a folder outside the repository, so nothing can come from the checkout.
About a minute (slow: it builds and installs); CI runs it in its unit-test stage."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(wheel, python of a fresh venv with the wheel installed, its environment)``."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy: building in the checkout would leave build/ and *.egg-info there
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "sslkit", src / "sslkit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src)], check=True)
    (wheel,) = (tmp / "dist").glob("sslkit-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)  # its own pip (ensurepip: offline)
    python = venv / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SSLKIT_DATA_DIR")}
    install = ["install", "-q", "--no-deps", "--no-index", "--ignore-installed", "--disable-pip-version-check"]
    subprocess.run([str(python), "-m", "pip", *install, wheel], check=True, env=clean)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # then this environment's packages (torch, numpy, ...), after the venv's own: a path line, so their .pth files
    # (the checkout's editable install among them) are not run
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    env = dict(clean)
    env.update(SSLKIT_OFFLINE="1", SSLKIT_PROGRESS="0", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return wheel, python, env, tmp


def run(argv, env, cwd) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (argv, done.stderr[-3000:])
    return done.stdout


def test_the_wheel_ships_the_license_and_py_typed(installed):
    wheel = installed[0]
    names = zipfile.ZipFile(wheel).namelist()
    assert "sslkit/py.typed" in names
    assert any(re.fullmatch(r"sslkit-[^/]+\.dist-info/licenses/LICENSE", n) for n in names), names
    assert "sslkit/experiments/paper_numbers/a_table1.csv" in names


def test_the_installed_package_is_the_wheel_and_its_core_is_light(installed):
    _, python, env, tmp = installed
    code = (
        "import sys, sslkit\nimport sslkit.select, sslkit.coreset, sslkit.risk, sslkit.algorithms, sslkit.engine\n"
        "print(sslkit.__file__)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'matplotlib', 'yaml', 'jupyter_client'}))"
    )
    where, heavy = run([str(python), "-c", code], env, tmp).splitlines()
    assert where.startswith(str(tmp / "venv")) and heavy == "[]", (where, heavy)


def test_the_installed_command_works(installed):
    _, python, env, tmp = installed
    sslkit = str(python.parent / "sslkit")
    assert "usage: sslkit" in run([sslkit, "--help"], env, tmp)
    listed = run([sslkit, "list"], env, tmp)
    assert "supervised_baseline" in listed and "all_three" in listed  # the experiments ship with the wheel
    done = subprocess.run([sslkit, "reproduce", "a-theory"], cwd=tmp, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "clone the repository" in done.stderr  # the notebooks are not in the wheel


def test_the_readme_library_examples_run_against_the_wheel(installed):
    _, python, env, tmp = installed
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"^```python\n(.*?)^```", readme, flags=re.S | re.M)
    assert len(examples) == 2
    for code in examples:
        out = run([str(python), "-c", code], env, tmp)
        assert 0.5 < float(out.split()[0]) <= 1.0, out
