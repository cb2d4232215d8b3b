"""Checks shared by the shipped-network card tests: a network's attached results follow the
issues' measuring rules, and its hand-written card states them."""

from __future__ import annotations

from pathlib import Path

from analysis.checkpoint import read_header


def assert_measured_by_the_issues_rules(path: Path, agent: str, same_split: tuple[str, ...]) -> None:
    """1,000 puzzles, the full STS, 100 games against Stockfish 1350, and the ``same_split`` rows
    measured on one test split."""
    m = read_header(path)[0].metrics
    assert m[f"puzzles_{agent}"]["total"] == 1000
    assert m[f"sts_{agent}"]["maximum"] == 15000
    assert m[f"match_{agent}_vs_sf1350"]["games"] == 100
    positions = {m[name]["positions"] for name in same_split}
    assert len(positions) == 1 and positions.pop() > 1000, "the metrics rows must share one test split"


def assert_card_reports_the_attached_figures(path: Path, agent: str, same_split: tuple[str, ...]) -> None:
    """``NAME.md`` states the puzzles, STS, match, split and value sanity figures in the file."""
    m, card = read_header(path)[0].metrics, path.with_suffix(".md").read_text()
    puzzles, sts, match = m[f"puzzles_{agent}"], m[f"sts_{agent}"], m[f"match_{agent}_vs_sf1350"]
    assert f"{100 * puzzles['accuracy']:.1f}%" in card and f"{sts['score']:,}" in card
    assert f"+{match['wins']} ={match['draws']} -{match['losses']}" in card
    for name in same_split:
        assert f"{100 * m[name]['action_accuracy']:.1f}%" in card, name
        assert f"{m[name]['kendall_tau']:.3f}" in card, name
    sanity = m["value_sanity"]
    passed = sum(c["passed"] for c in sanity["checks"])
    assert f"{passed}/{len(sanity['checks'])}" in card
