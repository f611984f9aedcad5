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


def test_diverged_text_names_each_failing_group_and_its_reading():
    from sslkit.experiments.paper_c.report import diverged_text

    recs = [_rec("craig", a) for a in (95.0, 10.1, 94.0)] + [_rec("craig", 11.3, normalize=True), _rec("random", 93.0)]
    _, counts = split_diverged(recs, 10)
    assert diverged_text(counts) == ("VAT CRAIG (raw weights): 1 of 3; VAT CRAIG (weights scaled to mean 1): 1 of 1")
    _, clean = split_diverged([_rec("random", 93.0), _rec("craig", 92.0)], 10)
    assert diverged_text(clean) == "none of the 2 runs"


def test_trade_off_page_and_claims_leave_the_diverged_runs_out():
    """On the committed MNIST stand-in records: the page's rows and the claims' views hold no run at chance, the page
    and the claims' evidence say how many were left out, and the claims see every run that trained."""
    from sslkit.experiments.paper_c import report as R
    from sslkit.experiments.paper_c.claims import c_beats_craig_gradmatch
    from sslkit.experiments.paper_c.claims_speed import tradeoff_views
    from sslkit.experiments.paper_c.experiments import TRADEOFF

    recs = TRADEOFF.records("cpu")
    kept, counts = split_diverged(recs, R.TRADEOFF_CLASSES)
    if len(kept) == len(recs):
        pytest.skip("no diverged run among the committed records")
    page = R.tradeoff_report(recs)
    assert min(r["test_acc"] for r in page["rows"]) >= 15.0 and page["facts"]["diverged"] == R.diverged_text(counts)
    assert min(r["test_acc"] for rows in tradeoff_views(recs).values() for r in rows) >= 15.0
    assert sum(len(rows) for rows in tradeoff_views(recs).values()) == sum(
        len(rows) for rows in tradeoff_views(kept).values()
    )
    _, evidence = c_beats_craig_gradmatch(recs)
    assert evidence.endswith("diverged runs left out (failures, not results): " + R.diverged_text(counts))
