"""``knowing_doing``: does the network *know* a tactical fact (a linear probe reads it) and does it
*act* on it (its top move does what the fact asks)? After CSSLab's Maia-2 finding (NeurIPS 2025):
weaker nets know as much and do less.

Per position (``measure``): the facts (an opponent piece en prise, an own piece en prise, a mate in
one) and the network's top move, with whether it *does* the thing: captures an en-prise piece,
leaves no own piece en prise (saves it), plays the mate. Over the run (``summarise``): each
concept's *doing* rate among the positions where the fact holds (Wilson 95%), beside its *knowing*:
the best AUROC over the readout points of a probe trained on the study's own positions
(``analysis.probes``: balanced sets, fixed split, bootstrap interval, the untrained copy beside it).
A concept whose positions cannot make a balanced set says so instead of a number.
"""

from __future__ import annotations

import chess
import numpy as np

from analysis.probes.concepts import en_prise_map, get_concept, mate_in_one_move
from analysis.studies import stats
from analysis.studies.methods import StudyContext, StudyMethod, register
from analysis.studies.positions import Item

# The fact each doing rate is about, and the probe concept that measures knowing it.
FACTS = {"opp_en_prise": "captures an opponent piece that is en prise",
         "own_en_prise": "leaves none of its own pieces en prise",
         "mate_in_one": "plays the mate in one"}


def facts(board: chess.Board) -> dict:
    """The position's facts: en-prise squares per side and the mate in one (UCI or None)."""
    opp, own = en_prise_map(board, not board.turn), en_prise_map(board, board.turn)
    mate = mate_in_one_move(board)
    return {"opp": [int(s) for s in np.flatnonzero(opp == 1)], "own": [int(s) for s in np.flatnonzero(own == 1)],
            "mate": None if mate is None else mate.uci()}


def doing(board: chess.Board, move: chess.Move) -> dict:
    """Per concept whose fact holds here: whether ``move`` does the thing (None where it does not hold)."""
    found = facts(board)
    after = board.copy(stack=False)
    after.push(move)
    own_left = np.nansum(en_prise_map(after, board.turn)) > 0
    return {"opp_en_prise": bool(move.to_square in found["opp"]) if found["opp"] else None,
            "own_en_prise": bool(not own_left) if found["own"] else None,
            "mate_in_one": bool(after.is_checkmate()) if found["mate"] else None}


class KnowingDoing(StudyMethod):
    name = "knowing_doing"

    def measure(self, context: StudyContext, item: Item) -> dict:
        board = item.board()
        if not any(board.legal_moves):
            return {"kept": False, "reason": "no legal move"}
        top = context.evaluator.evaluate([board])[0].best_move()
        return {"kept": True, "fen": item.fen, "top": top.uci(), "doing": doing(board, top)}

    def summarise(self, context: StudyContext, results: list[dict]) -> dict:
        kept = [r for r in results if r.get("kept")]
        rates = {name: _rate([r["doing"][name] for r in kept]) for name in FACTS}
        knowing = knowing_scores(context, [r["fen"] for r in kept])
        table = [{"concept": name, "doing": FACTS[name], "doing rate": rates[name],
                  "knowing (best AUROC)": knowing[name].get("trained"), "best point": knowing[name].get("best_point"),
                  "untrained at that point": knowing[name].get("untrained"), "why no AUROC": knowing[name].get("why")}
                 for name in FACTS]
        return {"positions": {"kept": len(kept), "dropped": len(results) - len(kept)}, "doing": rates,
                "knowing": knowing, "table": table, "figures": []}


def _rate(flags: list) -> dict:
    held = [f for f in flags if f is not None]
    return stats.share(sum(held), len(held))


def knowing_scores(context: StudyContext, fens: list[str]) -> dict:
    """Per concept: {"trained": best score cell, "untrained": the control at that point, "best_point",
    "balance"} from probes trained on ``fens``, or {"why": ...} when they cannot make a balanced set."""
    from analysis.lens import lens_for
    from analysis.probes.activations import untrained_copy
    from analysis.probes.fit import FitConfig
    from analysis.probes.positions import PositionConfig, build
    from analysis.probes.run import RunConfig, probe_network

    settings, seed = context.settings, context.spec.seed
    out: dict[str, dict] = {}
    concepts = []
    for name in FACTS:
        try:
            build([get_concept(name)], PositionConfig(positions=settings.positions, seed=seed), fens=fens)
            concepts.append(get_concept(name))
        except ValueError as exc:
            out[name] = {"why": str(exc)}
    if not concepts:
        return out
    data = build(concepts, PositionConfig(positions=settings.positions, seed=seed), fens=fens)
    untrained = lens_for(untrained_copy(context.evaluator.model, seed), context.evaluator.encoding)
    config = RunConfig(components=settings.components, threads=context.threads or 1,
                       fit=FitConfig(bootstrap=settings.bootstrap, seed=seed))
    result, _, _ = probe_network(context.adapter, untrained, data, config, seed)
    points = result["points"]
    for concept in concepts:
        entry = result["concepts"][concept.name]
        best = entry["best_point"]
        if best is None:
            out[concept.name] = {"why": entry.get("why", "no readout point reads it")}
            continue
        at = points.index(best)
        out[concept.name] = {"trained": entry["trained"][at], "untrained": entry["untrained"][at], "best_point": best,
                             "balance": entry["balance"], "size": entry["size"]}
    return out


register(KnowingDoing())
