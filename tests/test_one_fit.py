"""One task, one fit: every training run of the reproduction goes through :func:`sslkit.engine.fit`.

* statically, over every module of ``sslkit.experiments`` and ``sslkit.pipeline`` (read with ``ast``): no
  :class:`~sslkit.engine.Trainer` is built anywhere else -- so the run functions of the catalog, which all live
  there, have no other training path;
* dynamically, over the catalog: each experiment's run function is called on its first quick-scale configuration
  with ``Trainer.fit`` replaced by a stub that records who called it and stops the run; every call must come from
  :func:`sslkit.engine.fit`.

The pieces themselves are tested in tests/test_task.py (:class:`sslkit.task.Task`) and tests/test_engine_fitting.py
(:class:`sslkit.engine.TrainConfig` and :func:`sslkit.engine.fit`).
"""

import ast
import functools
import inspect
from pathlib import Path

import pytest

from sslkit.data import DatasetNotFoundError
from sslkit.engine import Trainer
from sslkit.experiments import catalog

ROOT = Path(__file__).resolve().parents[1]
#: where the reproduction's run functions and the pipeline live
SCANNED = sorted((ROOT / "sslkit" / "experiments").rglob("*.py")) + [ROOT / "sslkit" / "pipeline.py"]


def trainer_constructions(source: str) -> list:
    """Line numbers of the calls that build a Trainer (``Trainer(...)``, ``engine.Trainer(...)``) in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name == "Trainer":
                lines.append(node.lineno)
    return lines


def test_the_check_sees_a_trainer_built_outside_the_one_fit():
    planted = "from sslkit.engine import Trainer\n\ndef run(seed):\n    return Trainer(m, a, seed=seed).fit(X, y)\n"
    assert trainer_constructions(planted) == [4]
    assert trainer_constructions("import sslkit.engine as E\nE.Trainer(m, a)\n") == [2]
    assert trainer_constructions("from sslkit.engine import fit\nfit(task, a)\n") == []


def test_no_module_of_the_reproduction_builds_a_trainer_itself():
    found = {
        str(p.relative_to(ROOT)): lines
        for p in SCANNED
        if (lines := trainer_constructions(p.read_text(encoding="utf-8")))
    }
    assert found == {}, f"Trainer built outside sslkit.engine.fit: {found}"


def _run_functions():
    for e in catalog.experiments():
        for name, scale in e.scales.items():
            fn = scale.run or e.run
            while isinstance(fn, functools.partial):
                fn = fn.func
            yield e.name, name, fn


def test_every_run_function_of_the_catalog_is_in_the_scanned_modules():
    scanned = {str(p.relative_to(ROOT)) for p in SCANNED}
    outside = {
        (name, scale, fn.__module__)
        for name, scale, fn in _run_functions()
        if str(Path(inspect.getfile(fn)).resolve().relative_to(ROOT)) not in scanned
    }
    assert not outside, f"run functions the static check does not read: {sorted(outside)}"


class _Stopped(Exception):
    """Raised by the stubbed Trainer.fit: the run reached training (through the one fit)."""


def _quick_cases():
    """Each experiment's first configuration at its quick scale; an experiment with none (a GPU-only paper-scale
    protocol such as b_table4_ssl) is left to the static check above."""
    for e in catalog.experiments():
        configs = e.scale("quick").configs() if "quick" in e.scales else []
        if configs:
            yield pytest.param(e, "quick", configs[0], id=f"{e.name}/quick")


@pytest.mark.slow  # loads each experiment's data and runs it up to its first training step
@pytest.mark.parametrize(("experiment", "scale", "config"), list(_quick_cases()))
def test_each_run_function_trains_through_the_one_fit(experiment, scale, config, monkeypatch):
    callers = []

    def stub(self, *args, **kwargs):
        callers.append(inspect.stack()[1].frame.f_globals["__name__"] + "." + inspect.stack()[1].function)
        raise _Stopped

    monkeypatch.setattr(Trainer, "fit", stub)
    fn = experiment.call(scale, device="cpu")
    try:
        fn(**config, seed=experiment.scale(scale).seeds[0])
    except _Stopped:
        pass
    except DatasetNotFoundError as err:
        pytest.skip(f"data not here: {err}")
    assert set(callers) <= {"sslkit.engine.fitting.fit"}, callers
