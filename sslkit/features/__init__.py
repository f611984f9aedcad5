"""Image features for sample selection (paper B §7.1): pretrained networks or pixels, cached on disk.

:func:`extract_features` (uint8 images -> float32 ``(N, d)`` numpy), :data:`EXTRACTORS`,
:func:`available_extractors`, :data:`EXTRACTOR_INFO` (one line per extractor, for result tables),
:func:`efficientnet_lite0` (the offline pretrained network) and :func:`default_cache_dir`.
"""

from sslkit.features.cache import default_cache_dir
from sslkit.features.extractors import (
    CLIP_MEAN,
    CLIP_STD,
    EXTRACTOR_INFO,
    EXTRACTORS,
    available_extractors,
    efficientnet_lite0,
    extract_features,
)

__all__ = [
    "extract_features",
    "available_extractors",
    "EXTRACTORS",
    "EXTRACTOR_INFO",
    "efficientnet_lite0",
    "default_cache_dir",
    "CLIP_MEAN",
    "CLIP_STD",
]
