"""The front of sslkit.engine (the one training loop): what it exports and the package docstring's map of the loop's
parts. Each module's own behaviour: test_engine_<module>.py (the loop itself: test_engine_trainer.py)."""

import importlib
import inspect

from package_front import submodules

import sslkit.engine as engine
from sslkit.algorithms.base import Hook


def test_exports_are_the_modules_objects():
    names = list(engine.__all__)
    assert len(names) == len(set(names))
    assert engine.Hook is Hook  # the algorithms' hook, re-exported for the loop's users
    for name in set(names) - {"Hook", "USB_SGD"}:
        obj = getattr(engine, name)
        assert obj.__module__.startswith("sslkit.engine."), f"{name} comes from {obj.__module__}"
        assert getattr(importlib.import_module(obj.__module__), name) is obj and inspect.getdoc(obj), name
    assert engine.USB_SGD is importlib.import_module("sslkit.engine.optim").USB_SGD


def test_the_front_exports_the_loop_and_its_extension_points():
    assert {"Trainer", "fit", "TrainConfig", "Hook", "UnlabeledSampler", "EarlyStopping"} <= set(engine.__all__)
    assert set(submodules(engine)) == {"fitting", "inference", "inputs", "optim", "sampling", "schedules", "trainer"}
