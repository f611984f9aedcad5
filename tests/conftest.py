"""Fixtures shared by the test files.

``one_thread``: torch runs on one intra-op thread for the test, then gets its thread count back (tiny tensors on a
busy 2-core machine: thread hand-offs cost more than the work). Use it in a file with
``pytestmark = pytest.mark.usefixtures("one_thread")``. test_features.py, test_paper_a_appendix.py,
test_select.py and test_select_baselines.py still define their own copy (autouse); they can switch to this one.
"""

import pytest
import torch


@pytest.fixture
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
