"""sslkit: semi-supervised learning, reproduced.

Layers (each imports only from the layers below it):

* mathematics of each paper: :mod:`sslkit.risk` (paper A), :mod:`sslkit.select` (paper B),
  :mod:`sslkit.coreset` (paper C); plus :mod:`sslkit.data` and :mod:`sslkit.models`;
* :mod:`sslkit.algorithms`: one class per SSL method, losses only;
* :mod:`sslkit.engine`: the one training loop;
* :mod:`sslkit.experiments` and :mod:`sslkit.cli`: grids, tables, notebook runs.

Importing ``sslkit`` itself is cheap: sub-packages are imported on first use.
"""

__version__ = "0.1.0"
