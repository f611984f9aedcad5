"""The front of sslkit.risk (paper A's mathematics): what it exports, the package docstring's map of its modules, and
that numpy in gives numpy out and torch in gives torch out. Each module's own mathematics: test_risk_<module>.py."""

import numpy as np
import torch
from package_front import check_exports, submodules

import sslkit.risk as risk


def test_exports_are_the_modules_objects():
    # monte_carlo: the samplers and resampling trials that check the formulas, imported from their module;
    # quadratic: the machinery the theorems of variance.py are stated with
    check_exports(risk, modules_internal=("monte_carlo", "quadratic"))


def test_the_package_docstring_maps_every_public_module():
    missing = [m for m in submodules(risk) if m != "quadratic" and f":mod:`sslkit.risk.{m}`" not in risk.__doc__]
    assert not missing, f"the sslkit.risk docstring does not name {missing}"


def test_numpy_in_numpy_out_torch_in_torch_out():
    g = np.array([[0.2, -1.0], [1.5, 0.3], [-0.4, 0.9]])
    y_l = np.array([0, 1, 1])
    for f in (lambda x: risk.loss_matrix(x, "ce"), lambda x: risk.component_risks(risk.loss_matrix(x, "ce"), y_l, 2)):
        a, t = f(g), f(torch.as_tensor(g))
        assert isinstance(a, np.ndarray) and isinstance(t, torch.Tensor)
        np.testing.assert_allclose(a, t.numpy(), rtol=1e-12)
