"""`sslkit list`, `sslkit run`, `sslkit reproduce` and the notebook registry (issue 2, section 5; issue 20).

The real notebooks are not executed here; a throwaway MyST notebook stands in for them (two papermill
executions in all). `sslkit run` at quick scale, one experiment per paper: tests/test_catalog.py.
"""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import sslkit
from sslkit.cli import main
from sslkit.experiments import notebooks
from sslkit.experiments.notebooks import NotebookSpec, notebook_parameters, parse_parameter, reproduce

REPO = Path(__file__).resolve().parents[1]

# No kernelspec in the header on purpose: reproduce() must set it (tooling pitfall P2).
TINY = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
---

# Tiny notebook

```{code-cell} ipython3
:tags: [parameters]

scale = "quick"
device = "auto"
n = 2
label = "x"
```

```{code-cell} ipython3
import os
print(f"RESULT scale={scale} device={device} n={n!r} label={label!r} double={n * 2}")
print("CWD", os.getcwd())
```
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny_notebook.md"
    path.write_text(TINY)
    return NotebookSpec(name="tiny", path=str(path), title="A tiny test notebook", paper="A", gpu_recommended=True)


def outputs_text(path):
    nb = nbformat.read(str(path), as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    return nb, (injected[0].source if injected else ""), text


def test_registry_has_the_end_to_end_notebook():
    spec = notebooks.get_notebook("supervised-baseline")
    assert spec.path == "notebooks/supervised_baseline.md"
    assert spec.title == "Supervised MLP: accuracy vs number of labels (Breast Cancer, Banknote)"
    assert spec.paper == "A" and spec.gpu_recommended is False
    specs = notebooks.registry()
    assert len({s.name for s in specs}) == len(specs) == len(list((REPO / "notebooks").glob("*.md")))
    assert all(s.paper in {"A", "B", "C", "-"} and s.nbval in {"strict", "lax"} for s in specs)
    assert [s.name for s in specs if s.paper == "B"] == [
        "b-figure2",
        "b-figure3",
        "b-lecture",
        "b-table1",
        "b-table2",
        "b-table3",
        "b-table4",
        "b-table5",
        "b-table6",
        "b-theory",
    ]
    assert notebooks.get_notebook("a-table1").targets[0]["item"] == "Table 1"
    assert notebooks.repo_root() == REPO


def test_list_command(capsys):
    from sslkit.experiments import catalog

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    nb_part, exp_part = out.split("\n\n")
    header, *rows = nb_part.splitlines()
    assert header.split()[:5] == ["NOTEBOOK", "PAPER", "GPU?", "SCALES", "PATH"]
    assert len(rows) == len(notebooks.registry())
    row = next(r for r in rows if r.startswith("supervised-baseline "))
    assert row.split()[:5] == ["supervised-baseline", "A", "no", "quick,paper", "notebooks/supervised_baseline.md"]
    assert "Supervised MLP: accuracy vs number of labels" in row
    assert "quick,cpu,paper" in next(r for r in rows if r.startswith("c-robust "))  # the cpu scale is listed
    header, *rows = exp_part.strip().splitlines()
    assert header.split()[:3] == ["EXPERIMENT", "PAPER", "NOTEBOOK"] and len(rows) == len(catalog.experiments())
    for e in catalog.experiments():
        row = next(r for r in rows if r.split()[0] == e.name)
        assert all(f"{scale} ({s.kind}" in row for scale, s in e.scales.items()), row


def test_console_script_and_module_entry_point():
    script = Path(sys.executable).parent / "sslkit"
    commands = [[sys.executable, "-m", "sslkit.cli", "list"]]
    if script.exists():
        commands.append([str(script), "list"])
    for cmd in commands:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO)
        assert done.returncode == 0, done.stderr
        assert "supervised-baseline" in done.stdout


def test_version_and_no_command(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sslkit {sslkit.__version__}"
    assert main([]) == 2
    assert "reproduce" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text, expected",
    [
        ("n=3", ("n", 3)),
        ("lr=1e-3", ("lr", 0.001)),
        ("quick=True", ("quick", True)),
        ("name=mnist", ("name", "mnist")),
        ("label=hello world", ("label", "hello world")),
        ("sizes=[10, 20]", ("sizes", [10, 20])),
        ("s='7'", ("s", "7")),
        ("x=", ("x", "")),
        ("expr=a=b", ("expr", "a=b")),
    ],
)
def test_parse_parameter(text, expected):
    assert parse_parameter(text) == expected


@pytest.mark.parametrize("text", ["novalue", "=3", "bad key=1", "1x=2"])
def test_parse_parameter_errors(text):
    with pytest.raises(ValueError, match="key=value"):
        parse_parameter(text)


def test_notebook_parameters_parses_the_tagged_cell(tiny):
    assert notebook_parameters(tiny.path) == {"scale": "quick", "device": "auto", "n": 2, "label": "x"}


def test_reproduce_executes_with_injected_parameters_in_repo_root(tiny, tmp_path):
    out = reproduce(
        tiny, scale="paper", device="cpu", parameters={"n": 5, "label": "api"}, out_dir=tmp_path / "api", progress=False
    )
    assert out == (tmp_path / "api" / "tiny_notebook.ipynb").resolve() and out.is_file()
    nb, injected, text = outputs_text(out)
    assert nb.metadata.kernelspec.name == "python3"
    assert 'scale = "paper"' in injected and "n = 5" in injected and 'label = "api"' in injected
    assert "RESULT scale=paper device=cpu n=5 label='api' double=10" in text
    assert f"CWD {REPO}" in text  # papermill runs in the repository root (pitfall P16)


def test_cli_reproduce_with_registry_override(tiny, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(notebooks, "registry", lambda: (tiny,))
    assert main(["list"]) == 0
    assert "tiny" in capsys.readouterr().out
    rc = main(
        [
            "reproduce",
            "tiny",
            "-p",
            "n=7",
            "-p",
            "label=hello world",
            "--device",
            "cpu",
            "--out",
            str(tmp_path / "cli"),
            "--no-progress",
        ]
    )
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    path = Path(captured.out.strip().splitlines()[-1])
    assert path == (tmp_path / "cli" / "tiny_notebook.ipynb").resolve()
    _, injected, text = outputs_text(path)
    assert 'scale = "quick"' in injected and "n = 7" in injected
    assert "RESULT scale=quick device=cpu n=7 label='hello world' double=14" in text


def test_cli_user_errors_are_one_line_without_traceback(tiny, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(notebooks, "registry", lambda: (tiny,))
    cases = [
        (
            ["reproduce", "tiny", "-p", "epochs=3", "--out", str(tmp_path)],
            "notebook 'tiny' has no parameter 'epochs'; its parameters are: device, label, n, scale",
        ),
        (["reproduce", "nope"], "unknown notebook 'nope'; reproducible notebooks: tiny"),
        (["reproduce", "tiny", "-p", "oops"], "must look like key=value"),
        (["reproduce", "tiny", "-p", "scale='paper'"], "through the scale= argument"),
    ]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and err.startswith("sslkit: error:")
    assert main(["reproduce", "tiny", "--scale", "huge"]) == 2  # argparse choices
    assert "invalid choice: 'huge'" in capsys.readouterr().err
    assert not any(tmp_path.glob("*.ipynb"))


def test_cli_os_errors_kernels_and_parameter_types_are_one_line(tiny, tmp_path, monkeypatch, capsys):
    # Each used to end in a traceback (an OSError from the output folder, jupyter_client's NoSuchKernel)
    # or to run the notebook with a value of the wrong type.
    monkeypatch.setattr(notebooks, "registry", lambda: (tiny,))
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    cases = [
        (["reproduce", "tiny", "--out", str(blocker / "out")], str(blocker)),
        (["reproduce", "tiny", "--kernel", "no-such-kernel"], "no Jupyter kernel named 'no-such-kernel'; installed"),
        (["reproduce", "tiny", "-p", "n=abc"], "parameter 'n' must be a int like its default 2, got 'abc' (str)"),
        (["reproduce", "tiny", "-p", "n=2.5"], "parameter 'n' must be a int like its default 2, got 2.5 (float)"),
        (["reproduce", "tiny", "-p", "n=True"], "got True (bool)"),
        (["reproduce", "tiny", "-p", "label=3"], "parameter 'label' must be a str like its default 'x', got 3 (int)"),
        (
            ["run", "supervised_baseline", "--seeds", "0", "-o", "datasets=banknote", "--results-dir", str(blocker)],
            "cannot write the results file",
        ),
        (["run", "no_such_experiment"], "unknown experiment 'no_such_experiment'; experiments: a_table1"),
        (["run", "b_table5", "--scale", "cpu"], "experiment 'b_table5' has no scale 'cpu'; its scales: quick, paper"),
        (["run", "b_table4_ssl", "--scale", "paper", "--device", "cpu"], "the paper's protocol for a GPU"),
        (["run", "b_figure3", "--executor", "spark"], "executor name must be one of ('local', 'ray', 'slurm')"),
        (["run", "b_figure3", "--seeds", "a-b"], "seeds must look like '0-4' or '0,1,2'"),
        (["reproduce", "tiny", "-p", "executor={'name': 'spark'}"], "executor name must be one of"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert "Traceback" not in err and err.startswith("sslkit: error:") and err.count("\n") == 1, err
    assert not any(tmp_path.rglob("*.ipynb"))


def test_parameter_types_follow_the_parameters_cell(tiny):
    from sslkit.experiments.notebooks import check_parameter_types

    defaults = {"n": 2, "rate": 0.5, "flag": False, "label": "x", "items": [1], "anything": None}
    check_parameter_types(
        {"n": 3, "rate": 1, "flag": True, "label": "y", "items": (2, 3), "anything": 1.5}, defaults, "t"
    )
    check_parameter_types({"undeclared_type": object()}, defaults, "t")  # not in defaults (not a literal)
    for bad in ({"rate": "fast"}, {"flag": 1}, {"items": "1"}, {"n": None}):
        with pytest.raises(ValueError, match="must be a"):
            check_parameter_types(bad, defaults, "t")
    assert notebook_parameters(tiny.path, literal_only=True) == {
        "scale": "quick",
        "device": "auto",
        "n": 2,
        "label": "x",
    }


def test_reproduce_argument_errors(tiny, tmp_path):
    with pytest.raises(
        ValueError,
        match="unknown notebook 'nope'; reproducible notebooks: (howto-[a-z-]+, )*(pipeline, )?(ssl-primer, )?"
        "a-ablations, "
        ".*supervised-baseline",
    ):
        reproduce("nope")
    with pytest.raises(ValueError, match="scale must be one of quick, cpu, paper"):
        reproduce(tiny, scale="full")
    with pytest.raises(ValueError, match="device must be one of"):
        reproduce(tiny, device="gpu")
    with pytest.raises(ValueError, match="no parameter 'lr'; its parameters are: device, label, n, scale"):
        reproduce(tiny, parameters={"lr": 0.1})
    no_params = tmp_path / "no_params.md"
    no_params.write_text(TINY.replace(":tags: [parameters]\n", ""))
    with pytest.raises(ValueError, match="no code cell tagged 'parameters'"):
        reproduce(NotebookSpec("np", str(no_params), "no parameters"))
    missing = NotebookSpec("missing", "notebooks/definitely_missing.md", "not there")
    with pytest.raises(FileNotFoundError, match="ship with the sslkit git repository, not with the installed package"):
        reproduce(missing)


def test_missing_real_notebook_is_a_clear_cli_error(monkeypatch, capsys):
    missing = NotebookSpec("ghost", "notebooks/ghost_notebook.md", "not shipped")
    monkeypatch.setattr(notebooks, "registry", lambda: (missing,))
    assert main(["reproduce", "ghost"]) == 2
    err = capsys.readouterr().err
    assert "ghost_notebook.md" in err and "git repository" in err and "Traceback" not in err


def test_no_shipped_notebooks_is_a_clear_cli_error(monkeypatch, capsys):
    monkeypatch.setattr(notebooks, "registry", lambda: ())
    assert main(["reproduce", "a-table1"]) == 2
    err = capsys.readouterr().err
    assert "no notebooks under" in err and "git repository" in err and "Traceback" not in err


def test_cli_failing_notebook_exits_1_and_names_the_executed_notebook(tiny, tmp_path, monkeypatch, capsys):
    import papermill
    from papermill.exceptions import PapermillExecutionError

    seen = {}

    def failing_execute(input_path, output_path, **kwargs):  # stands in for a kernel run that fails
        seen.update(kwargs, kernelspec=nbformat.read(input_path, as_version=4).metadata.kernelspec.name)
        raise PapermillExecutionError(1, 2, "1/0", "ZeroDivisionError", "division by zero", [])

    monkeypatch.setattr(papermill, "execute_notebook", failing_execute)
    monkeypatch.setattr(notebooks, "registry", lambda: (tiny,))
    out = tmp_path / "fail"
    assert main(["reproduce", "tiny", "--out", str(out), "-p", "n=3"]) == 1
    err = capsys.readouterr().err
    assert "failed in cell 2: ZeroDivisionError: division by zero" in err
    assert f"{out}/tiny_notebook.ipynb" in err and "Traceback" not in err
    assert seen["parameters"] == {"scale": "quick", "device": "auto", "n": 3}
    assert seen["cwd"] == str(REPO) and seen["kernel_name"] == "python3"
    assert seen["kernelspec"] == "python3"  # set on the converted notebook (pitfall P2)


def test_parse_seeds_and_options():
    from sslkit.cli import parse_option, parse_seeds

    assert parse_seeds("0-4") == [0, 1, 2, 3, 4] and parse_seeds("3") == [3] and parse_seeds("0,2,7") == [0, 2, 7]
    assert parse_option("datasets=adult,banknote") == ("datasets", ["adult", "banknote"])
    assert parse_option("datasets=adult") == ("datasets", ["adult"]) and parse_option("tables=4,5") == (
        "tables",
        [4, 5],
    )
    assert parse_option("datasets=['adult']") == ("datasets", ["adult"])
    assert parse_option("methods=full") == ("methods", ["full"])  # a plural key takes a list of one


def test_table1_settings_option_narrows_the_grid_and_refuses_a_misspelt_setting():
    """More seeds of one Table 1 setting: ``-o 'settings=["(100,100)"]'`` keeps that setting only; the natural
    ``settings=(100,100)`` parses as two numbers and a spaced "(100, 100)" is no setting: both are refused by name,
    never silently run as an empty or a whole grid."""
    from sslkit.cli import parse_option
    from sslkit.experiments import catalog

    paper = catalog.get("a_table1").scale("paper")
    key, value = parse_option('settings=["(100,100)"]')
    grid = paper.configs(readings=False, datasets=["cifar_cvd"], **{key: value})
    assert len(grid) == 10 and {g["setting"] for g in grid} == {"(100,100)"}
    assert len(paper.configs(readings=False, datasets=["cifar_cvd"])) == 40
    for bad in ("settings=(100,100)", 'settings=["(100, 100)"]'):
        key, value = parse_option(bad)
        with pytest.raises(ValueError, match="Table 1 has no setting"):
            paper.configs(readings=False, **{key: value})


def test_table2_settings_option_narrows_the_grid_as_table1s():
    from sslkit.cli import parse_option
    from sslkit.experiments import catalog

    paper = catalog.get("a_table2").scale("paper")
    key, value = parse_option('settings=["Bal. (200)","Sev. (500)"]')
    grid = paper.configs(readings=False, datasets=["mnist"], **{key: value})
    assert len(grid) == 20 and {g["setting"] for g in grid} == {"Bal. (200)", "Sev. (500)"}
    assert len(paper.configs(readings=False, datasets=["mnist"])) == 70
    with pytest.raises(ValueError, match=r"Table 2 has no setting \['Bal \(200\)'\]"):
        paper.configs(readings=False, settings=["Bal (200)"])


def test_executor_parameter_takes_a_dict_of_resources(tiny, tmp_path, monkeypatch):
    """The documented `-p "executor={'name': 'ray', 'num_gpus': 1}"` reaches the notebook as that dict (it used to
    be refused: the default "local" is a str), and a bad executor is refused before anything runs."""
    import papermill

    seen = {}
    monkeypatch.setattr(papermill, "execute_notebook", lambda i, o, **kw: seen.update(kw))
    executor_nb = tmp_path / "with_executor.md"
    executor_nb.write_text(TINY.replace('label = "x"', 'label = "x"\nexecutor = "local"'))
    spec = NotebookSpec("with-executor", str(executor_nb), "takes an executor")
    monkeypatch.setattr(notebooks, "registry", lambda: (spec,))
    argv = ["reproduce", "with-executor", "--out", str(tmp_path), "-p", "executor={'name': 'ray', 'num_gpus': 1}"]
    assert main(argv) == 0
    assert seen["parameters"]["executor"] == {"name": "ray", "num_gpus": 1}
    assert main(["reproduce", "with-executor", "--out", str(tmp_path), "-p", "executor=slurm"]) == 0
    assert seen["parameters"]["executor"] == "slurm"


def documented_commands() -> list:
    """Every ``sslkit ...`` command of the README and the book's pages (a trailing backslash continues a line)."""
    import shlex

    commands = []
    for page in [REPO / "README.md", *sorted((REPO / "book").glob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            if line.startswith("sslkit ") and not line.startswith("sslkit/"):
                while line.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    line = line[:-1] + " " + lines[i].strip()
                argv = shlex.split(line, comments=True)
                commands.append((page.name, argv[1:]))
            i += 1
    return commands


def test_the_documented_commands_are_accepted_verbatim(monkeypatch, capsys, tmp_path):
    """Issue 19 §6: README.md's and book/clusters.md's commands (the Ray and Slurm resource dicts included) go
    through the CLI as written; the notebook gets the executor dict, `sslkit run` the experiment. Nothing runs:
    papermill and catalog.run are stand-ins here (the real CPU run: the test below)."""
    import papermill

    from sslkit.experiments import catalog

    seen = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda i, o, **kw: seen.append(("reproduce", kw["parameters"])))
    monkeypatch.setattr(catalog, "run", lambda name, scale, **kw: seen.append(("run", name, scale, kw)) or [])
    commands = documented_commands()
    pages = {page for page, _ in commands}
    assert {"README.md", "clusters.md"} <= pages and any("executor" in " ".join(a) for _, a in commands)
    for page, argv in commands:
        if argv and argv[0] == "reproduce" and "--out" not in argv:
            argv = [*argv, "--out", str(tmp_path)]
        assert main(argv) == 0, (page, argv, capsys.readouterr().err)
        if argv[0] == "reproduce" and any("executor=" in a for a in argv):
            executor = seen[-1][1]["executor"]
            assert isinstance(executor, dict) and executor["name"] in ("ray", "slurm"), (page, executor)
    assert any(s[0] == "run" for s in seen) and any(s[0] == "reproduce" for s in seen)


@pytest.mark.slow
def test_the_documented_ray_command_runs_with_a_cpu_only_request(tmp_path, capsys):
    """book/clusters.md's `sslkit run ... --executor "{'name': 'ray', 'num_gpus': 1}"`, made CPU-runnable: quick
    scale, the CPU, one CPU per run instead of a GPU, narrowed to one run, into a temporary results folder."""
    pytest.importorskip("ray")
    from sslkit.experiments import load_results

    argv = next(a for p, a in documented_commands() if p == "clusters.md" and a[0] == "run" and "--executor" in a)
    argv = [x.replace("'num_gpus': 1", "'num_cpus': 1") for x in argv]
    argv = [{"paper": "quick", "cuda": "cpu"}.get(x, x) for x in argv]
    name = argv[1]
    argv += ["--seeds", "0", "-o", "algorithms=vat", "-o", "methods=full", "--results-dir", str(tmp_path)]
    try:
        assert main(argv) == 0, capsys.readouterr().err
    finally:
        import ray

        ray.shutdown()
    records = load_results(tmp_path / name / "quick.jsonl")
    assert len(records) == 1 and records[0]["config"]["method"] == "full"
