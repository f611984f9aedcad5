"""The front of sslkit.features: what it exports. Each module's own behaviour: test_features_extractors.py,
test_features_cache.py."""

from package_front import check_exports

import sslkit.features as features


def test_exports_are_the_modules_objects():
    check_exports(features)
