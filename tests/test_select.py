"""The front of sslkit.select (paper B's selection): what it exports, and the package docstring's map of its modules.
Each module's own mathematics: test_select_<module>.py."""

from package_front import check_exports, submodules

import sslkit.select as select


def test_exports_are_the_modules_objects():
    check_exports(
        select,
        internal={
            "kernel": ["check_features", "check_alpha", "check_bandwidth", "DEFAULT_BLOCK_SIZE"],
        },
    )


def test_the_package_docstring_maps_every_module():
    missing = [m for m in submodules(select) if f"sslkit.select.{m}" not in select.__doc__]
    assert not missing, f"the sslkit.select docstring does not name {missing}"
