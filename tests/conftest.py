"""Fixtures shared by the test files.

``one_thread``: torch runs on one intra-op thread for the test, then gets its thread count back (tiny tensors on a
busy 2-core machine: thread hand-offs cost more than the work). Use it in a file with
``pytestmark = pytest.mark.usefixtures("one_thread")``. test_features.py, test_paper_a_appendix.py
and test_select_baselines.py still define their own copy (autouse); they can switch to this one.

``numpy_default_errstate`` (every test): the test starts with numpy's default floating-point error state. An
oracle package that changes it at import (CORDS calls ``np.seterr(all="raise")``) would otherwise turn an
underflow in any later test into an error, or hide one; import such packages with ``oracles.import_quietly``.

Hypothesis (the property tests of test_risk*.py) draws its examples from a fixed seed (profile ``repeatable``,
the default): a test run is the same run on every machine and every rerun, so a failure is reproducible and a
passing CI is not luck of the draw. ``HYPOTHESIS_PROFILE=explore`` draws fresh examples (and more of them) to
search for counterexamples; a counterexample found that way becomes an ``@example`` of its test.
"""

import os

import numpy as np
import pytest
import torch
from hypothesis import settings
from oracles import NUMPY_DEFAULT_ERRSTATE

settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(autouse=True)
def numpy_default_errstate():
    assert np.geterr() == NUMPY_DEFAULT_ERRSTATE, (
        f"numpy's floating-point error state is {np.geterr()}, not the default {NUMPY_DEFAULT_ERRSTATE}: a module "
        "imported before this test changed it for the whole process (CORDS does: import it with "
        "oracles.import_quietly)"
    )
