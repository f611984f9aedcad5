"""sslkit: semi-supervised learning, reproduced.

Layers (each imports only from the layers below it):

* mathematics of each paper: :mod:`sslkit.risk` (paper A), :mod:`sslkit.select` (paper B),
  :mod:`sslkit.coreset` (paper C), independent of each other; plus :mod:`sslkit.data`, :mod:`sslkit.models`,
  :mod:`sslkit.features`, :mod:`sslkit.task` (the data of one run) and the shared input checks ``sslkit._checks``;
* :mod:`sslkit.algorithms`: one class per SSL method, losses only;
* :mod:`sslkit.engine` (the one training loop, and :func:`sslkit.engine.fit`, the one fit every run trains
  through) and :mod:`sslkit.callbacks`;
* :mod:`sslkit.pipeline` (papers B, A and C chained in one estimator, :class:`~sslkit.pipeline.SSLPipeline`),
  :mod:`sslkit.experiments` and :mod:`sslkit.cli`: grids, tables, notebook runs.

``tests/test_layers.py`` enforces the order.

Importing ``sslkit`` itself is cheap: sub-packages are imported on first use.
"""

__version__ = "0.1.0"
