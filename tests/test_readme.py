"""README.md runs as written, and gives the same answer twice.

* every ```python block runs in a fresh interpreter, offline, in a temporary folder;
* the first block, run in two fresh processes, gives bit-identical weights and the same score (``seed=`` covers the
  model's initialisation: ``Trainer`` builds the model under its seed);
* every line of every ```bash block is one of: a ``pip install`` of this project (its extras exist) or of PyTorch's
  CPU build (the documented index), a ``bash .ci/...`` script that exists, or an ``sslkit`` command. ``sslkit list``
  and the quick-scale ``sslkit run`` lines run for real (offline, into a temporary results folder; the run is
  slow); the cpu / paper-scale ``sslkit run`` and the ``sslkit reproduce`` lines take hours or a GPU, so they are
  only checked: tests/test_cli.py passes each one verbatim through the CLI with the run and the notebook execution
  stubbed (every name, scale, reading, option, seed range, parameter and executor is validated there).
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README, flags=re.S | re.M)


def env() -> dict:
    out = {**os.environ, "SSLKIT_OFFLINE": "1", "SSLKIT_PROGRESS": "0", "PYTHONPATH": str(REPO)}
    out.pop("SSLKIT_DATA_DIR", None)  # quick data only: what a new user has
    return out


def run_python(code: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def commands() -> list[list[str]]:
    out = []
    for block in blocks("bash"):
        for line in block.splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                out.append(argv)
    return out


def test_the_readme_has_the_blocks_this_test_runs():
    assert len(blocks("python")) == 2 and len(blocks("bash")) == 3


def test_readme_python_block_1_is_bit_identical_in_two_fresh_processes(tmp_path):
    probe = (
        "\nimport hashlib\nimport torch\n"
        "digest = hashlib.sha256(b''.join(v.cpu().numpy().tobytes() for v in trainer.model.state_dict().values()))\n"
        "print('WEIGHTS', digest.hexdigest())\n"
    )
    first, second = (run_python(blocks("python")[0] + probe, tmp_path) for _ in range(2))
    assert "WEIGHTS" in first and first == second  # the score and every trained weight, bit for bit
    score = float(first.splitlines()[0])
    assert 0.85 <= score <= 1.0, first  # breast cancer, 60 labels: a trained classifier, not a constant one


@pytest.mark.slow
def test_readme_python_block_2_runs_as_written(tmp_path):
    out = run_python(blocks("python")[1], tmp_path).split()
    score, sizes = float(out[0]), [int(s.strip("[],")) for s in out[1:]]
    assert 0.5 < score <= 1.0  # ten digit classes from 100 labels: far above chance (0.1)
    assert sizes and all(s == 200 for s in sizes)  # every selection is the coreset of k = 200 unlabeled rows


def test_every_readme_command_is_a_known_kind():
    """A new kind of command in the README must be added here (and so be run or checked)."""
    pyproject = (REPO / "pyproject.toml").read_text()
    for argv in commands():
        if argv[:2] == ["pip", "install"]:
            target = argv[2]
            if target == "torch":
                assert argv[3:] == ["--index-url", CPU_INDEX], argv  # PyTorch's own CPU-build instruction
                continue
            extra = re.fullmatch(r"\.(?:\[(\w+)\])?", target)
            assert extra, f"README installs {target!r}: not this project"
            assert extra.group(1) is None or f"\n{extra.group(1)} = [" in pyproject, f"no extra {target!r}"
        elif argv[0] == "bash":
            assert (REPO / argv[1]).is_file(), argv
        else:
            assert argv[0] == "sslkit" and argv[1] in ("list", "run", "reproduce"), argv


def test_readme_sslkit_list_runs(tmp_path):
    assert ["sslkit", "list"] in commands()
    done = subprocess.run(
        [sys.executable, "-m", "sslkit.cli", "list"], cwd=tmp_path, env=env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "supervised-baseline" in done.stdout and "supervised_baseline" in done.stdout


@pytest.mark.slow
def test_readme_quick_runs_run_offline_without_data_files(tmp_path):
    quick = [a for a in commands() if a[:2] == ["sslkit", "run"] and a[a.index("--scale") + 1] == "quick"]
    assert quick
    for argv in quick:
        done = subprocess.run(
            [sys.executable, "-m", "sslkit.cli", *argv[1:], "--results-dir", str(tmp_path), "--no-progress"],
            cwd=tmp_path,
            env=env(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert re.match(r"\d+ runs of ", done.stdout) and int(done.stdout.split()[0]) > 0, done.stdout
