"""``probe``: the look-ahead paper's bilinear probe at every readout point, against an untrained copy.

Positions: the study's puzzles that fit the look-ahead set (with a ``sparring`` net: the set's kept
puzzles, as ``lookahead`` keeps them; without one: those passing the structural filters and the
network's "correct" filter, which is all the probe needs, since it never reads the corruption), plus
``mined`` positions from the master games where the network's own line is confident for three plies
(``analysis.studies.mining``). A position whose 1st and 3rd moves share a target square is left out,
as the puzzle set leaves it out. Per readout point with squares, the whole-3rd-move accuracy of the
probe (``analysis.studies.bilinear_probe``: 5 seeds, 70/30 split, mean and t 95% interval) on the
network and on the same architecture randomly initialised with the study's seed.

``measure`` only picks the positions (the puzzle filters are the slow part, and they resume); the
streams are read and the probes trained in ``summarise``, since a probe learns from every position.
"""

from __future__ import annotations

import chess
import torch

from analysis.studies.bilinear_probe import MoveProbeData, probe_whole_move
from analysis.studies.errors import StudyInputError
from analysis.studies.lookahead_set import build, correct, structural
from analysis.studies.methods import StudyContext, StudyMethod, register
from analysis.studies.methods.lookahead import rules_of
from analysis.studies.mining import MiningConfig, game_positions, master_pgns, mine
from analysis.studies.positions import Item

RULE_NAMES = {"kept": "kept (the look-ahead set)", "correct": "structural + correct", "line": "structural only"}
# Fewer positions than this and a 30% test split says nothing: the probe is not trained.
MIN_POSITIONS = 20


def untrained_copy(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """The same architecture randomly initialised under ``seed`` (torch's global generator untouched)."""
    from analysis.models import get_family

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        copy = get_family(model.family).build(model.config)
    return copy.to(next(model.parameters()).device).eval()


def line_of(fen: str, first: str, third: str) -> tuple[int, int, int]:
    """(1st target, 3rd source, 3rd target) as real squares."""
    a, b = chess.Move.from_uci(first), chess.Move.from_uci(third)
    return a.to_square, b.from_square, b.to_square


def streams(adapter, fens: list[str]) -> dict[str, torch.Tensor | None]:
    """Per readout point, (N, 64, C) square vectors of each position (from its FEN alone), or None for
    a point without squares. One forward pass a position."""
    out: dict[str, list] = {point: [] for point in adapter.readouts}
    with torch.no_grad():
        for fen in fens:
            prepared = adapter.prepare(chess.Board(fen))
            residuals, _ = adapter.run(prepared, capture=True)
            for point, tensor in zip(adapter.readouts, residuals):
                if out[point] is None:
                    continue
                try:
                    out[point].append(adapter.square_stream(prepared, point, tensor)[0].float().cpu())
                except ValueError:
                    out[point] = None
    return {point: None if rows is None else torch.stack(rows) for point, rows in out.items()}


class Probe(StudyMethod):
    name = "probe"

    def prepare(self, context: StudyContext) -> None:
        if context.settings.puzzle_rule() == "kept":
            self.load_sparring(context)

    def measure(self, context: StudyContext, item: Item) -> dict:
        if item.meta.get("source") == "games":
            if len(item.moves) < 3:
                return {"kept": False, "reason": "short line"}
            reason = structural(item)
            if reason:
                return {"kept": False, "reason": reason}
            return {"kept": True, "source": "games", "fen": item.fen, "first": item.moves[0], "third": item.moves[2]}
        rule = context.settings.puzzle_rule()
        if rule == "kept":
            puzzle = build(item, context.evaluator, context.state["sparring"], rules_of(context.settings))
            if not puzzle["kept"]:
                return {k: puzzle[k] for k in ("kept", "eligible", "reason")}
        else:
            reason = structural(item)
            if reason:
                return {"kept": False, "eligible": False, "reason": reason}
            if rule == "correct" and not correct(context.evaluator, item):
                return {"kept": False, "eligible": True, "reason": "not correct"}
        return {"kept": True, "source": "puzzles", "fen": item.fen, "first": item.moves[0], "third": item.moves[2]}

    def summarise(self, context: StudyContext, results: list[dict]) -> dict:
        rows = [r for r in results if r.get("kept")]
        mined = self._mined(context) if context.spec.positions.kind != "games" else []
        rows, repeats = _once([(r["fen"], r["first"], r["third"]) for r in rows] + mined)
        points = list(context.adapter.readouts)
        counts = {"puzzles": sum(1 for r in results if r.get("kept") and r.get("source") == "puzzles"),
                  "games": sum(1 for r in results if r.get("kept") and r.get("source") == "games") + len(mined),
                  "repeats_dropped": repeats, "positions": len(rows),
                  "puzzle_rule": RULE_NAMES[context.settings.puzzle_rule()]}
        if len(rows) < MIN_POSITIONS:
            cells = {"trained": [None] * len(points), "untrained": [None] * len(points)}
            return self._summary(points, cells, counts, f"only {len(rows)} positions (the probe needs {MIN_POSITIONS})")
        labels = torch.tensor([line_of(*r) for r in rows], dtype=torch.long)
        fens = [r[0] for r in rows]
        cells = {"trained": self._accuracies(context, context.adapter, fens, labels),
                 "untrained": self._accuracies(context, self._untrained_adapter(context), fens, labels)}
        return self._summary(points, cells, counts, None)

    @staticmethod
    def _mined(context: StudyContext) -> list[tuple[str, str, str]]:
        """``settings.mined`` master-game positions that fit (the same structural rule as puzzles)."""
        if context.settings.mined == 0:
            return []
        try:
            paths = master_pgns()
        except FileNotFoundError as exc:
            raise StudyInputError(f"the probe's mined positions: {exc} (set mined=0 to go without)") from None
        out, config = [], MiningConfig(limit=context.settings.mined)
        positions = game_positions(paths, config.skip)
        while len(out) < context.settings.mined:
            found = mine(context.evaluator, positions, MiningConfig(limit=context.settings.mined - len(out)))
            if not found:
                break
            out += [(m.fen, m.moves[0], m.moves[2]) for m in found
                    if chess.Move.from_uci(m.moves[0]).to_square != chess.Move.from_uci(m.moves[2]).to_square]
        return out

    @staticmethod
    def _untrained_adapter(context: StudyContext):
        from analysis.lens import lens_for

        return lens_for(untrained_copy(context.adapter.model, context.spec.seed), context.adapter.encoding)

    @staticmethod
    def _accuracies(context: StudyContext, adapter, fens: list[str], labels: torch.Tensor) -> list[dict | None]:
        config = context.settings.config()
        out = []
        for point, x in streams(adapter, fens).items():
            if x is None:
                out.append(None)
                continue
            data = MoveProbeData(x, labels[:, 0], labels[:, 1], labels[:, 2])
            result = probe_whole_move(data, config, seed=context.spec.seed)
            out.append({"score": result.mean, "low": result.low, "high": result.high,
                        "per_seed": list(result.per_seed), "train": result.train, "test": result.test})
        return out

    @staticmethod
    def _summary(points: list[str], cells: dict, counts: dict, note: str | None) -> dict:
        probe = {kind: [None if c is None else c["score"] for c in cells[kind]] for kind in ("trained", "untrained")}
        table = [{"point": point, "trained": _cell(cells["trained"][p]), "untrained": _cell(cells["untrained"][p])}
                 for p, point in enumerate(points)]
        series = [{"label": f"{kind} network", "y": probe[kind],
                   "low": [None if c is None else c["low"] for c in cells[kind]],
                   "high": [None if c is None else c["high"] for c in cells[kind]]} for kind in ("trained", "untrained")]
        figure = {"name": "probe", "title": "Bilinear probe: whole 3rd move right, held-out 30%",
                  "ylabel": "accuracy", "x": points, "series": series}
        return {"table": table, "figures": [figure], "probe": probe, "probe_cells": cells, "points": points,
                "probe_positions": counts, "probe_note": note}


def _cell(cell: dict | None) -> dict:
    if cell is None:
        return {"score": None, "low": None, "high": None}
    return {"score": cell["score"], "low": cell["low"], "high": cell["high"]}


def _once(rows: list[tuple[str, str, str]]) -> tuple[list[tuple[str, str, str]], int]:
    """Each position once (by EPD; the first kept), so no position is both trained and tested on."""
    seen, out = set(), []
    for row in rows:
        key = chess.Board(row[0]).epd()
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out, len(rows) - len(out)


register(Probe())
