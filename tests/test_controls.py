"""Positive controls of the CPU stand-ins (:mod:`sslkit.experiments.report.controls`): the rule on synthetic records
(a stand-in that shows the paper's orderings passes, one that does not cannot decide), the gate on the ledger, and
the controls of every committed stand-in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import numpy as np
import pandas as pd
import pytest

from sslkit.experiments import catalog
from sslkit.experiments.report import controls as K
from sslkit.experiments.report import scorecard as S
from sslkit.experiments.report.ledger import Claim
from sslkit.experiments.report.stats import compare
from sslkit.experiments.runs.experiment import PAPER_PROTOCOL, STAND_IN, Experiment, Scale

HI, LO = {"method": "ssl"}, {"method": "sup"}


def _control(**kw) -> K.Control:
    return K.Control(**{"id": "T-ctl", "text": "SSL above supervised", "where": "Table 1", "higher": HI, "lower": LO,
                        "paper": (90.0, 80.0), **kw})  # fmt: skip


def _records(shift: float, n: int = 6, noise: float = 0.5, seed: int = 0, protocol: str = "cpu") -> list:
    """``n`` seeds of two arms, the SSL arm ``shift`` points above the supervised one (shared per-seed noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(n):
        base = 80 + rng.normal(0, 2)
        for method, extra in (("ssl", shift), ("sup", 0.0)):
            config = {"protocol": protocol, "method": method}
            acc = base + extra + rng.normal(0, noise)
            out.append({"key": f"{json.dumps(config)}-{s}", "config": config, "seed": s, "metrics": {"test_acc": acc}})
    return out


# ------------------------------------------------------------------------------------------------ the rule


def test_printed_reads_one_cell_of_the_papers_tables():
    assert K.printed("c_table12", scenario="ood", dataset="mnist", method="vat", ratio=0.75) == 88.1
    assert K.printed("c_table12", scenario="ood", dataset="mnist", method="supervised", ratio=0.75) == 93.0
    with pytest.raises(ValueError, match="rows of c_table12"):  # several rows: a control must name one cell
        K.printed("c_table12", scenario="ood", dataset="mnist", method="vat")


def test_a_control_is_an_ordering_the_paper_shows():
    with pytest.raises(ValueError, match="higher arm's number"):  # the paper's numbers must show the ordering
        _control(paper=(80.0, 90.0))
    with pytest.raises(ValueError, match="two different"):
        _control(lower=HI)


def test_the_one_rule_decides_a_control_on_synthetic_records():
    shown = K.evaluate(_control(), _records(shift=5.0))
    assert shown["outcome"] == K.SHOWN and shown["p"] < 0.05 and shown["seeds"] == "6 / 6"
    assert shown["difference"].startswith("+5.") and shown["paper"] == "90 vs 80"
    reversed_ = K.evaluate(_control(), _records(shift=-5.0))
    assert reversed_["outcome"] == K.REVERSED and reversed_["difference"].startswith("-")
    flat = K.evaluate(_control(), _records(shift=0.0, noise=2.0))
    assert flat["outcome"] == K.NOT_SHOWN and flat["p"] >= 0.05
    missing = K.evaluate(_control(lower={"method": "supervised-arm-never-run"}), _records(shift=5.0))
    assert missing["outcome"] == K.NOT_RUN and missing["seeds"] == "6 / 0"
    # the scope picks a stand-in's records: another protocol's records are not this stand-in's arms
    other = K.evaluate(_control(scope={"protocol": "cpu_long"}), _records(shift=5.0))
    assert other["outcome"] == K.NOT_RUN


def test_a_control_with_seeds_reads_those_seeds_only():
    """A confirmatory control (its seeds declared after a pilot) is decided on its own seeds: the pilot's records
    (here seeds 0-5, SSL far below) do not enter, and with none of its seeds run it is not run."""
    pilot = _records(shift=-5.0, n=6)
    fresh = [{**r, "seed": r["seed"] + 6} for r in _records(shift=5.0, n=6, seed=1)]
    assert K.evaluate(_control(), pilot + fresh)["seeds"] == "12 / 12"
    confirm = K.evaluate(_control(seeds=tuple(range(6, 12))), pilot + fresh)
    assert confirm["outcome"] == K.SHOWN and confirm["seeds"] == "6 / 6"
    assert K.evaluate(_control(seeds=tuple(range(6))), pilot + fresh)["outcome"] == K.REVERSED
    assert K.evaluate(_control(seeds=(40, 41)), pilot + fresh)["outcome"] == K.NOT_RUN


def test_two_records_of_one_seed_in_an_arm_are_an_error():
    records = _records(5.0, protocol="cpu") + _records(5.0, protocol="cpu_long")
    with pytest.raises(ValueError, match="narrow the control's scope"):
        K.evaluate(_control(), records)
    assert K.evaluate(_control(scope={"protocol": "cpu_long"}), records)["outcome"] == K.SHOWN


def test_a_stand_in_passes_only_when_every_control_is_shown():
    assert K.state([K.SHOWN, K.SHOWN]) == K.PASSES
    assert K.state([K.SHOWN, K.NOT_SHOWN]) == K.CANNOT_DECIDE
    assert K.state([K.SHOWN, K.NOT_RUN]) == K.CANNOT_DECIDE  # a control that cannot run is not shown
    assert K.state([K.REVERSED]) == K.CANNOT_DECIDE
    assert K.state([]) == K.NO_CONTROLS


# ------------------------------------------------------------------------------------------------ the gate


def _experiment(name: str, controls: tuple) -> Experiment:
    grid = lambda: [{"protocol": "cpu", "method": m} for m in ("ssl", "sup")]  # noqa: E731
    return Experiment(
        name,
        "A",
        name,
        "a test experiment",
        print,
        {
            "cpu": Scale(STAND_IN, grid, range(6), "digits", controls=controls),
            "paper": Scale(PAPER_PROTOCOL, grid, range(6), "digits"),
        },
        1,
    )


def _commit(root, e: Experiment, scale: str, records) -> None:
    path = root / e.name / f"{e.file(scale)}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _claim(id_: str, e: Experiment) -> Claim:
    return Claim(id_, "A", "Table X", "", "§1", "SSL helps.", "ssl above sup", (e,), lambda records: ("", ""))


def test_the_gate_keeps_a_failing_stand_in_from_deciding(tmp_path):
    good, weak, paper = (_experiment(n, (_control(),)) for n in ("t_good", "t_weak", "t_paper"))
    _commit(tmp_path, good, "cpu", _records(shift=5.0))
    _commit(tmp_path, weak, "cpu", _records(shift=-5.0))  # the stand-in shows the paper's ordering reversed
    _commit(tmp_path, paper, "cpu", _records(shift=-5.0))
    _commit(tmp_path, paper, "paper", _records(shift=5.0))  # decided at the paper's protocol: never gated
    table = K.controls_table((good, weak, paper), {}, tmp_path)
    assert list(table["outcome"]) == [K.SHOWN, K.REVERSED, K.REVERSED]
    states = K.stand_ins(table)
    assert list(states["state"]) == [K.PASSES, K.CANNOT_DECIDE, K.CANNOT_DECIDE]
    claims = [_claim("T-good", good), _claim("T-weak", weak), _claim("T-weak-run", weak), _claim("T-paper", paper)]
    ledger = pd.DataFrame(
        {
            "id": [c.id for c in claims],
            "paper": "A",
            "level": [STAND_IN, STAND_IN, "", PAPER_PROTOCOL],
            "verdict": ["does not hold", "does not hold", "not run", "holds"],
        }
    )
    gated = K.gate(ledger, claims, states, tmp_path).set_index("id")
    assert gated.loc["T-good", "verdict"] == "does not hold"  # a stand-in that passes decides
    assert gated.loc["T-good", "stand_in_verdict"] == "does not hold"
    assert gated.loc["T-weak", "verdict"] == K.CANNOT_DECIDE  # one that does not, cannot
    assert gated.loc["T-weak", "stand_in_verdict"] == "does not hold"  # its test's verdict is kept
    assert gated.loc["T-weak", "controls"] == "t_weak/cpu: 0 of 1 shown"
    assert gated.loc["T-weak-run", "verdict"] == "not run"  # nothing to gate
    assert gated.loc["T-paper", "verdict"] == "holds" and gated.loc["T-paper", "stand_in_verdict"] == ""


def test_a_deciding_column_narrows_the_gate_to_the_named_stand_in(tmp_path):
    cpu = _control(id="c1", scope={"protocol": "cpu"}, stand_in="cpu")
    long = _control(id="c2", scope={"protocol": "cpu_long"}, stand_in="cpu_long")
    e = _experiment("t_two", (cpu, long))
    _commit(tmp_path, e, "cpu", _records(-5.0, protocol="cpu") + _records(5.0, protocol="cpu_long"))
    states = K.stand_ins(K.controls_table((e,), {}, tmp_path))
    assert dict(zip(states["stand-in"], states["state"])) == {"cpu": K.CANNOT_DECIDE, "cpu_long": K.PASSES}
    ledger = pd.DataFrame({"id": ["T"], "paper": "A", "level": [STAND_IN], "verdict": ["holds"]})
    claims = [_claim("T", e)]
    assert K.gate(ledger, claims, states, tmp_path)["verdict"].item() == K.CANNOT_DECIDE  # either may decide
    named = ledger.assign(deciding=["t_two/cpu (cpu_long)"])
    assert K.gate(named, claims, states, tmp_path)["verdict"].item() == "holds"
    other = ledger.assign(**{"deciding evidence": ["protocol cpu: T = 4"]})  # the failing one named: gated
    assert K.gate(other, claims, states, tmp_path)["verdict"].item() == K.CANNOT_DECIDE
    # the scorecard names the stand-ins whose records a row group holds
    only_long = [r for r in _records(5.0, protocol="cpu_long")]
    assert list(K.of_records(states, e, "cpu", only_long, {})["stand-in"]) == ["cpu_long"]
    assert K.verdict_text(K.of_records(states, e, "cpu", only_long, {})) == "passes its positive controls"
    assert K.verdict_text(states).startswith("cannot decide (t_two/cpu (cpu): 0 of 1 controls shown")


def test_the_gate_reads_the_named_stand_in_of_a_second_experiment_the_claim_reads(tmp_path):
    """A claim that reads two experiments (paper C's robust claims: MNIST's grid, then CIFAR-10's) is gated by the
    stand-in its deciding column names, whichever experiment holds it; unnamed, by its first experiment's."""
    first = _experiment("t_first", (_control(id="c1", scope={"protocol": "cpu"}, stand_in="cpu"),))
    second = _experiment("t_second", (_control(id="c2", scope={"protocol": "cpu_c10"}, stand_in="cpu_c10"),))
    _commit(tmp_path, first, "cpu", _records(-5.0, protocol="cpu"))
    _commit(tmp_path, second, "cpu", _records(5.0, protocol="cpu_c10"))
    states = K.stand_ins(K.controls_table((first, second), {}, tmp_path))
    claims = [Claim("T", "A", "Table X", "", "§1", "SSL helps.", "ssl above sup", (first, second), lambda r: ("", ""))]
    ledger = pd.DataFrame({"id": ["T"], "paper": "A", "level": [STAND_IN], "verdict": ["holds"]})
    assert K.gate(ledger, claims, states, tmp_path)["verdict"].item() == K.CANNOT_DECIDE
    named = K.gate(
        ledger.assign(deciding=["cpu_c10 protocol: the CIFAR-10 stand-in decides"]), claims, states, tmp_path
    )
    assert named["verdict"].item() == "holds" and named["controls"].item() == "t_second/cpu (cpu_c10): 1 of 1 shown"
    both = K.gate(ledger.assign(deciding=["cpu_c10, cpu protocol"]), claims, states, tmp_path)
    assert both["verdict"].item() == K.CANNOT_DECIDE  # a failing stand-in among the deciding ones gates


def test_controls_belong_to_a_stand_in_scale():
    with pytest.raises(ValueError, match="only a CPU stand-in"):
        Scale(PAPER_PROTOCOL, lambda: [], (0,), "digits", controls=(_control(),))


def test_the_answer_counts_each_level_apart():
    ledger = pd.DataFrame(
        {
            "id": list("abcdefg"),
            "paper": "A",
            "level": [PAPER_PROTOCOL, PAPER_PROTOCOL, PAPER_PROTOCOL, STAND_IN, STAND_IN, "", ""],
            "verdict": ["holds", "does not hold", "not resolved", "holds", K.CANNOT_DECIDE, "not run", "not run"],
        }
    )
    lines = S.answer_lines(ledger, "A", {"f": S.GPU_DAYS, "g": S.NOT_OFFLINE})
    assert lines["protocol"] == "1 holds, 1 does not hold, 1 is not resolved (of 3 claims)"
    assert lines["stand_in"] == "1 holds, 0 do not hold, 0 are not resolved (of 1 claim)"
    assert lines["untestable"].startswith("3 of 7 claims: ")
    assert S.CANNOT_DECIDE_WHY in lines["untestable"] and S.GPU_DAYS in lines["untestable"]
    with pytest.raises(ValueError, match="no claim of paper 'B'"):
        S.answer_lines(ledger, "B", {})


# ------------------------------------------------------------------------------------------------ committed


@pytest.fixture(scope="module")
def committed():
    claims = catalog.ledger()
    return claims, catalog.controls(), catalog.stand_ins()


def test_every_stand_in_has_two_to_five_controls_declared_once():
    for e, scale in K.stand_in_scales(catalog.EXPERIMENTS):
        spec, registry = e.scales[scale].controls, catalog.CONTROLS.get(K.key(e, scale), ())
        assert not (spec and registry), f"{K.key(e, scale)}: controls in its spec and in its paper's CONTROLS"
        mine = K.controls_of(e, scale, catalog.CONTROLS)
        for label in {c.stand_in for c in mine}:
            n = sum(c.stand_in == label for c in mine)
            assert 2 <= n <= 5, (K.key(e, scale), label, n)
    assert set(catalog.CONTROLS) <= {K.key(e, s) for e, s in K.stand_in_scales(catalog.EXPERIMENTS)}


def test_each_controls_arms_are_configurations_of_its_grid():
    """A control names arms the stand-in's grid runs (else it could never be shown)."""
    for e, scale in K.stand_in_scales(catalog.EXPERIMENTS):
        for c in K.controls_of(e, scale, catalog.CONTROLS):
            src, s = c.reads or (e, scale)
            configs = src.scales[s].configs()
            for arm in (c.higher, c.lower):
                want = {**c.scope, **arm}
                if arm.get("algorithm") == "Supervised" or arm.get("method") == "Supervised":
                    continue  # the supervised arm B's stand-ins do not run (yet): "not run", never shown
                assert any(all(cfg.get(k) == v for k, v in want.items()) for cfg in configs), (c.id, want)


def test_the_committed_controls_and_the_gate(committed):
    claims, table, states = committed
    assert set(table["outcome"]) <= set(K.OUTCOMES)
    assert set(states["state"]) <= {K.PASSES, K.CANNOT_DECIDE}
    # the robust stand-in at T = 4: 75 % OOD does not put VAT below Supervised (the paper's 93.0 vs 88.1)
    robust = table[table["control"] == "C-ctl-cpu-sup-vat-75"].iloc[0]
    assert robust["paper"] == "93 vs 88.1" and robust["outcome"] != K.SHOWN
    # no claim whose deciding evidence is a stand-in that fails its controls reads "does not hold"
    failing = {K.name(r) for _, r in states.iterrows() if r["state"] == K.CANNOT_DECIDE}
    for _, row in claims[claims["level"] == STAND_IN].iterrows():
        names = {part.split(":")[0] for part in row["controls"].split("; ") if part}
        if names & failing:
            assert row["verdict"] == K.CANNOT_DECIDE, row["id"]
            assert row["stand_in_verdict"] in ("holds", "does not hold", "not resolved")
    assert not ((claims["verdict"] == "does not hold") & claims["controls"].str.contains(" 0 of ")).any()
    assert (claims.loc[claims["level"] == PAPER_PROTOCOL, "stand_in_verdict"] == "").all()
    assert (claims["verdict"] == K.CANNOT_DECIDE).sum() == (claims["stand_in_verdict"].ne("")
                                                            & claims["verdict"].eq(K.CANNOT_DECIDE)).sum()  # fmt: skip


def test_the_pages_show_the_controls_and_the_answer(committed):
    claims, table, _ = committed
    html = K.controls_html(table, [e.name for e in catalog.experiments("C")])
    assert html.count("<tr>") == 1 + (table["experiment"].isin([e.name for e in catalog.experiments("C")])).sum()
    assert "Supervised above VAT at 75 % OOD" in html and "Table 12 (MNIST OOD, ratio 0.75)" in html
    with pytest.raises(ValueError, match="has controls"):
        K.controls_html(table, "no_such_experiment")
    card = catalog.scorecard(claims=claims)
    robust = card[(card["item"] == "Figure 6 (a-c), Tables 12-13") & (card["group"] == "(b) MNIST OOD")].iloc[0]
    assert robust["status"].startswith(STAND_IN) and "cannot decide (" in robust["status"]
    for paper in "ABC":
        lines = catalog.answer(paper, claims, card)
        assert set(lines) == {"protocol", "stand_in", "untestable"}
        mine = claims[claims["paper"] == paper]
        n = int(mine["verdict"].isin([K.CANNOT_DECIDE, "not run"]).sum())
        assert lines["untestable"].startswith(f"{n} of" if n else "none of its")


# ------------------------------------------------------------------------------------------------ the pages

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _call(experiment: str, scale: str, label: str) -> re.Pattern:
    """The shared helper's call that shows one stand-in on its page:
    ``catalog.controls_table("<experiment>", "<scale>"[, "<label>"])`` (the label where a scale holds several)."""
    args = [experiment, scale] + ([label] if label else [])
    return re.compile(r"catalog\.controls_table\(\s*" + r",\s*".join(f'"{re.escape(a)}"' for a in args) + r"\s*\)")


def _code(source: str) -> str:
    """The code cells of a MyST notebook's source, joined (the call must run, not be quoted in prose)."""
    return "\n".join(c.source for c in jupytext.reads(source, fmt="md:myst").cells if c.cell_type == "code")


def _pages_lacking(states: pd.DataFrame, sources: dict) -> list:
    """The stand-ins (``experiment/scale (label)``) whose experiment's page source (``sources[notebook]``) has no
    code cell calling the shared helper with its key."""
    return [
        K.name(r)
        for _, r in states.iterrows()
        if not _call(r["experiment"], r["scale"], r["stand-in"]).search(
            _code(sources[catalog.get(r["experiment"]).notebook])
        )
    ]


def test_every_stand_in_shows_its_controls_on_its_page():
    states = catalog.stand_ins()
    assert len(states) >= 20 and set(states["state"]) <= {K.PASSES, K.CANNOT_DECIDE}
    sources = {
        nb: (NOTEBOOKS / f"{nb}.md").read_text() for nb in {catalog.get(e).notebook for e in states["experiment"]}
    }
    assert _pages_lacking(states, sources) == []
    # a page without the cell fails: strip one stand-in's call from its page's source
    robust = sources["c_robust"]
    without = {**sources, "c_robust": _call("c_robust", "cpu", "cpu_long").sub("catalog.controls(", robust)}
    assert _pages_lacking(states, without) == ["c_robust/cpu (cpu_long)"]
    quoted = {**sources, "c_robust": robust.replace('controls_table("c_robust", "cpu", "cpu_long")', "controls()")
              + '\nSee `catalog.controls_table("c_robust", "cpu", "cpu_long")`.\n'}  # fmt: skip
    assert _pages_lacking(states, quoted) == ["c_robust/cpu (cpu_long)"]  # in prose, not in a code cell


def _outcome(control: K.Control, experiment, scale: str) -> str:
    """A control's outcome recomputed from the committed records by the one rule (stats.compare: paired where both
    arms ran the same seeds, Welch's otherwise; 5 %), independently of :func:`K.evaluate`."""
    src, src_scale = control.reads or (experiment, scale)
    arms = [
        {r["seed"]: r["metrics"][control.metric] for r in catalog.records(src.name, src_scale)
         if all(r["config"].get(k) == v for k, v in {**control.scope, **arm}.items())
         and (not control.seeds or r["seed"] in control.seeds)}
        for arm in (control.higher, control.lower)
    ]  # fmt: skip
    if not all(arms):
        return K.NOT_RUN
    return {"higher": K.SHOWN, "lower": K.REVERSED}.get(compare(*arms).verdict, K.NOT_SHOWN)


def test_the_page_table_lists_exactly_the_registrys_controls_with_the_rules_outcomes():
    states = catalog.stand_ins()
    for _, s in states.iterrows():
        e, label = catalog.get(s["experiment"]), s["stand-in"]
        page = catalog.controls_table(e.name, s["scale"], label)
        mine = [c for c in K.controls_of(e, s["scale"], catalog.CONTROLS) if c.stand_in == label]
        assert list(page.rows["control"]) == [c.id for c in mine], K.name(s)
        want = [_outcome(c, e, s["scale"]) for c in mine]
        assert list(page.rows["outcome"]) == want, K.name(s)
        html = page._repr_html_()
        assert html.count("<tr>") == 1 + len(mine) and all(f"<strong>{o}</strong>" in html for o in want)
        shown = want.count(K.SHOWN)
        assert f"shows {shown} of its {len(mine)} positive controls" in page.sentence
        decides = shown == len(mine)
        assert ("so it decides its claims" in page.sentence) == decides == (s["state"] == K.PASSES), K.name(s)
    with pytest.raises(ValueError, match="has controls"):
        catalog.controls_table("c_robust", "cpu", "no such stand-in")
