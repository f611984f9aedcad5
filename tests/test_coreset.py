"""The front of sslkit.coreset (paper C's selection): what it exports and the package
docstring's map of its modules. Each module's own behaviour (the registry's among them): test_coreset_<module>.py."""

from package_front import check_exports, submodules

import sslkit.coreset as coreset


def test_exports_are_the_modules_objects():
    check_exports(
        coreset,
        internal={"retrieve_full": ["trainable_parameters"], "strategy": ["require"]},
    )


def test_the_package_docstring_maps_every_module():
    missing = [m for m in submodules(coreset) if f":mod:`sslkit.coreset.{m}`" not in coreset.__doc__]
    assert not missing, f"the sslkit.coreset docstring does not name {missing}"
