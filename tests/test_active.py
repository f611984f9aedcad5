"""The front of sslkit.active, the active-learning and SSAL selections of paper B §7.3: what it exports, and the
package docstring's map of its modules (one per method). Each method's defining mathematics:
test_active_<module>.py; the AL loop and Tables 2 / 3 (the reproduction): test_paper_b_active.py."""

import inspect

from package_front import check_exports, submodules

import sslkit.active as active


def test_exports_are_the_modules_objects():
    check_exports(active, modules_internal=("scoring",))  # scoring: what the methods share, not a method


def test_the_package_docstring_maps_every_module():
    missing = [m for m in submodules(active) if f":mod:`sslkit.active.{m}`" not in active.__doc__]
    assert not missing, f"the sslkit.active docstring does not name {missing}"


def test_every_method_selects_m_rows_first():
    for name in ("CoreSet", "CoreSetSSL", "VAAL", "LearnLoss", "MCDAL", "MMA", "CBSSAL", "TODSemi"):
        cls = getattr(active, name)
        assert list(inspect.signature(cls).parameters)[0] == "m", name
