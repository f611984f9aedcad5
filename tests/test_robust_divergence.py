"""A diverged run (final accuracy at chance, or not finite) is a recorded failure: counted, never averaged."""

import math

import pytest

from sslkit.experiments.paper_c.report import is_diverged, split_diverged


def _rec(method, acc, normalize=False):
    config = {"protocol": "cpu", "algorithm": "vat", "method": method, "fraction": 0.1}
    if normalize:
        config["normalize_weights"] = True
    return {"config": config, "seed": 0, "metrics": {"test_acc": acc}}


@pytest.mark.parametrize(
    "acc, classes, diverged",
    [(9.68, 10, True), (11.34, 10, True), (14.99, 10, True), (15.0, 10, False), (92.0, 10, False)]
    + [(24.9, 6, True), (25.0, 6, False), (math.nan, 10, True), (math.inf, 10, True), (None, 10, True)],
)
def test_chance_level_or_non_finite_accuracy_is_a_failure(acc, classes, diverged):
    assert is_diverged({"test_acc": acc}, classes) is diverged


def test_split_counts_failures_per_method_and_reading_and_keeps_the_rest():
    recs = [_rec("craig", a) for a in (95.0, 10.1, 94.0)] + [_rec("craig", 11.3, normalize=True), _rec("random", 93.0)]
    kept, counts = split_diverged(recs, 10)
    assert [r["metrics"]["test_acc"] for r in kept] == [95.0, 94.0, 93.0]
    rows = {(r.method, r.normalize_weights): (r.runs, r.diverged) for r in counts.itertuples()}
    assert rows == {("craig", False): (3, 1), ("craig", True): (1, 1), ("random", False): (1, 0)}
    # averaging the kept runs gives the trained runs' mean, not one pulled to chance by the failure
    assert sum(r["metrics"]["test_acc"] for r in kept if r["config"]["method"] == "craig") / 2 == 94.5


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_classes"):
        is_diverged({"test_acc": 50.0}, 1)
    with pytest.raises(ValueError, match="factor"):
        is_diverged({"test_acc": 50.0}, 10, factor=0.5)
