"""``lookahead``: residual patching by square and readout point, the look-ahead paper's first test.

Per puzzle of the look-ahead set (``analysis.studies.lookahead_set``, built with the ``sparring`` net),
at every readout point, the drop in log-odds of the clean top move when the point's stream on some
squares is taken from the corrupted position's pass (``analysis.lens.patching.patched_drops``: every
point and square set in one batched forward): (a) the 1st move's target square, (b) the 3rd move's target square, (c) the
corrupted squares (every square whose piece differs), (d) the largest over every other square patched
alone. Puzzles whose corrupted squares touch the 1st or 3rd target are kept in the set but skipped
here, as the paper's analysis skips them (counted). Summary: each curve's mean and s.e. per point, the
3rd-target curve's peak point, and there the 3rd-target minus other-max difference with 2 s.e.
"""

from __future__ import annotations

import collections
import dataclasses

import chess

from analysis.studies import stats
from analysis.studies.lookahead_set import REASONS, PuzzleRules, build, from_fen
from analysis.studies.methods import StudyContext, StudyMethod, register
from analysis.studies.positions import Item
from analysis.studies.settings import LookaheadSettings

CURVES = ("first_target", "third_target", "corrupted", "other_max")
LABELS = {"first_target": "1st-move target", "third_target": "3rd-move target", "corrupted": "corrupted squares",
          "other_max": "max over other squares"}


def rules_of(settings: LookaheadSettings) -> PuzzleRules:
    return PuzzleRules(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(PuzzleRules)})


def square_sets(first: chess.Move, third: chess.Move, corrupted: list[int]) -> tuple[list[list[int]], list[int]]:
    """The patched square sets, in CURVES order, then each other square alone; and those others."""
    taken = {first.to_square, third.to_square, *corrupted}
    others = [s for s in chess.SQUARES if s not in taken]
    return [[first.to_square], [third.to_square], list(corrupted), *[[s] for s in others]], others


def patch_curves(adapter, fen: str, corrupted_fen: str, move: chess.Move, first: chess.Move, third: chess.Move,
                 corrupted: list[int]) -> dict:
    """Per readout point, the four drops (and which other square gave the max). Clean and corrupted
    are prepared the same way, from their FENs alone."""
    from analysis.lens.patching import patched_drops

    clean, dirty = adapter.prepare(from_fen(fen)), adapter.prepare(from_fen(corrupted_fen))
    sets, others = square_sets(first, third, corrupted)
    table = patched_drops(adapter, clean, dirty, move, list(adapter.readouts), sets).float().tolist()
    curves = {name: [] for name in (*CURVES, "other_argmax")}
    for drops in table:  # one row a readout point
        for name, value in zip(CURVES[:3], drops[:3]):
            curves[name].append(round(value, 6))
        rest = drops[3:]
        at = max(range(len(rest)), key=rest.__getitem__)
        curves["other_max"].append(round(rest[at], 6))
        curves["other_argmax"].append(chess.square_name(others[at]))
    return curves


class Lookahead(StudyMethod):
    name = "lookahead"

    def prepare(self, context: StudyContext) -> None:
        self.load_sparring(context)

    def measure(self, context: StudyContext, item: Item) -> dict:
        puzzle = build(item, context.evaluator, context.state["sparring"], rules_of(context.settings))
        if not puzzle["kept"]:
            return puzzle
        first, third = chess.Move.from_uci(puzzle["first"]), chess.Move.from_uci(puzzle["third"])
        if {first.to_square, third.to_square} & set(puzzle["corrupted_squares"]):
            return {**puzzle, "analysed": False, "skip": "the corruption touches the 1st or 3rd target"}
        top = context.evaluator.evaluate([from_fen(puzzle["fen"])])[0].best_move()
        curves = patch_curves(context.adapter, puzzle["fen"], puzzle["corrupted_fen"], top, first, third,
                              puzzle["corrupted_squares"])
        return {**puzzle, "analysed": True, "top": top.uci(), "drops": curves}

    def summarise(self, context: StudyContext, results: list[dict]) -> dict:
        points = list(context.adapter.readouts)
        kept = [r for r in results if r.get("kept")]
        analysed = [r for r in kept if r.get("analysed")]
        dropped = collections.Counter(r["reason"] for r in results if not r.get("kept"))
        patching = {name: [_cell(stats.mean_se([r["drops"][name][p] for r in analysed])) for p in range(len(points))]
                    for name in CURVES}
        summary = {
            "puzzles": {"eligible": sum(bool(r.get("eligible")) for r in results), "kept": len(kept),
                        "analysed": len(analysed), "skipped": len(kept) - len(analysed),
                        "dropped": {reason: dropped.get(reason, 0) for reason in REASONS},
                        "items": [{k: r[k] for k in ("id", "fen", "corrupted_fen", "first", "third")} for r in kept]},
            "points": points, "patching": patching, "sparring": context.settings.sparring}
        summary["verdict"] = _verdict(analysed, points, patching)
        summary["table"] = [{"point": points[p], **{name: patching[name][p] for name in CURVES}}
                            for p in range(len(points))]
        if summary["verdict"]:
            v = summary["verdict"]
            summary["table"].append({"point": f"peak {v['peak']}: 3rd target - other max", "difference": v["difference"]})
        summary["figures"] = [{
            "name": "patching", "title": "Log-odds drop of the top move, patching squares from the corrupted pass",
            "ylabel": "log-odds drop", "x": points,
            "series": [{"label": LABELS[name], "y": [c["mean"] for c in patching[name]],
                        "low": [None if c["mean"] is None else c["mean"] - 2 * c["se"] for c in patching[name]],
                        "high": [None if c["mean"] is None else c["mean"] + 2 * c["se"] for c in patching[name]]}
                       for name in CURVES]}]
        return summary


def _cell(cell: dict) -> dict:
    return {"mean": cell["mean"], "se": cell["se"]}


def _verdict(analysed: list[dict], points: list[str], patching: dict) -> dict | None:
    """The 3rd-target curve's peak point and there the per-puzzle (3rd target - other max) difference,
    mean ± 2 s.e. (the peak is read off the same puzzles: an optimistic choice, as the paper's layer 10)."""
    if not analysed:
        return None
    means = [c["mean"] for c in patching["third_target"]]
    peak = max(range(len(points)), key=means.__getitem__)
    diff = stats.mean_se([r["drops"]["third_target"][peak] - r["drops"]["other_max"][peak] for r in analysed])
    return {"peak": points[peak], "peak_index": peak,
            "difference": {"mean": diff["mean"], "se": diff["se"], "low": diff["mean"] - 2 * diff["se"],
                           "high": diff["mean"] + 2 * diff["se"]},
            "last_point_largest": max(CURVES, key=lambda n: patching[n][-1]["mean"])}


register(Lookahead())
