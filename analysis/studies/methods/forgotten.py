"""``forgotten``: positions where the network dropped a better move on its way to the output.

On the decision timeline (the logit lens: each readout point's top move), a position is *forgotten*
when some move that was top at an earlier point is not the final top move and is better than it:
it is the puzzle's solution move (``Item.moves[0]``) and the final move is not, or Stockfish at a
fixed node budget (the engine lane) scores it above the final move by more than ``margin`` in
expected score for the mover. Summary: the count and share of forgotten positions (Wilson 95%), and
at which points their better moves were top, and the share *recovered* (``analysis.studies.recovery``):
removing or steering (scale -1) the late unit the causal grid names makes the better move the output's
top move, against removing a random late unit of the same kind (seeded by item).
"""

from __future__ import annotations

import chess

from analysis.engines.reference import EngineFailure, ReferenceEngine
from analysis.lens.core import logit_lens
from analysis.studies import recovery, stats
from analysis.studies.errors import StudyInputError
from analysis.studies.methods import StudyContext, StudyMethod, register
from analysis.studies.positions import Item


RECOVERY_LABELS = {"removed": "the named late unit removed", "steered": "the named late unit steered (scale -1)",
                   "control_removed": "control, a random late unit removed"}


class Forgotten(StudyMethod):
    name = "forgotten"

    def prepare(self, context: StudyContext) -> None:
        engine = ReferenceEngine(nodes=context.settings.nodes)
        try:
            context.state["engine"] = engine.open()
        except (EngineFailure, ValueError) as exc:
            raise StudyInputError(str(exc)) from None

    def close(self, context: StudyContext) -> None:
        engine = context.state.pop("engine", None)
        if engine is not None:
            engine.close()

    def measure(self, context: StudyContext, item: Item) -> dict:
        board = item.board()
        if not any(board.legal_moves):
            return {"kept": False, "reason": "no legal move"}
        view = logit_lens(context.adapter, board)
        tops = view.top()
        final = tops[-1]
        earlier = {}
        for point, move in enumerate(tops[:-1]):
            if move != final:
                earlier.setdefault(move, []).append(point)
        solution = item.moves[0] if item.moves else None
        better, final_score = [], None
        for move, points in earlier.items():
            if solution is not None and move == solution:
                better.append({"move": move, "points": points, "why": "solution"})
                continue
            if final_score is None:
                final_score = self._score(context, board, final)
            score = self._score(context, board, move)
            if score > final_score + context.settings.margin:
                better.append({"move": move, "points": points, "why": "engine", "score": round(score, 5)})
        return {"kept": True, "final": final, "tops": tops, "solution": solution, "forgotten": bool(better),
                "final_score": None if final_score is None else round(final_score, 5), "better": better,
                "recovery": self._recover(context, item, board, final, better) if better else None}

    @staticmethod
    def _recover(context: StudyContext, item: Item, board: chess.Board, final: str, better: list[dict]) -> dict:
        """Recovery of the better move (the solution if it is one, else the engine's best) from the
        point where it was last top."""
        target = next((b for b in better if b["why"] == "solution"), None) or max(better, key=lambda b: b["score"])
        point = max(target["points"])
        kinds = recovery.recover(context.adapter, board, target["move"], final, point, context.rng(item))
        return {"move": target["move"], "point": point, "kinds": kinds}

    @staticmethod
    def _score(context: StudyContext, board: chess.Board, uci: str) -> float:
        """Stockfish's expected score for the mover after ``uci`` (hash cleared first: deterministic)."""
        after = board.copy(stack=False)
        after.push_uci(uci)
        try:
            value = context.state["engine"].analyse(after, game=object())
        except EngineFailure as exc:
            raise StudyInputError(str(exc)) from None
        return 1.0 - value.score

    def summarise(self, context: StudyContext, results: list[dict]) -> dict:
        kept = [r for r in results if r.get("kept")]
        forgotten = [r for r in kept if r["forgotten"]]
        readouts = list(context.adapter.readouts)
        changed = [r for r in kept if any(m != r["final"] for m in r["tops"][:-1])]
        table = [
            {"measure": "forgotten positions", "share": stats.share(len(forgotten), len(kept))},
            {"measure": "an earlier top move differs from the final one", "share": stats.share(len(changed), len(kept))},
            {"measure": "forgotten by the solution rule",
             "share": stats.share(sum(any(b["why"] == "solution" for b in r["better"]) for r in forgotten), len(kept))},
        ]
        at = [stats.share(sum(any(p in b["points"] for b in r["better"]) for r in forgotten), len(forgotten))
              for p in range(len(readouts))]
        figure = {"name": "forgotten_points", "title": "Where forgotten positions had their better move on top",
                  "ylabel": "share of forgotten positions", "x": readouts,
                  "series": [{"label": "better move top here", "y": [c["score"] for c in at],
                              "low": [c["low"] for c in at], "high": [c["high"] for c in at]}]}
        recovered = self._recovered(forgotten)
        for kind, row in recovered.items():
            if kind != "reason":
                table += [{"measure": f"recovered: {label} ({kind})", "share": row[how]}
                          for how, label in RECOVERY_LABELS.items()]
        return {"table": table, "figures": [figure], "kept": len(kept), "forgotten": len(forgotten),
                "points": readouts, "forgotten_ids": [r["id"] for r in forgotten],
                "recovered": recovered}

    @staticmethod
    def _recovered(forgotten: list[dict]) -> dict:
        """Per unit kind: the recovered shares (named unit removed, steered; a random late unit
        removed) over the forgotten positions where the kind had late units, and how many had none;
        {"reason": ...} alone where the network has no scalable units."""
        found = [(r.get("recovery") or {}).get("kinds", {}) for r in forgotten]
        if found and all("reason" in f for f in found):
            return {"reason": found[0]["reason"]}
        out = {}
        for kind in sorted({k for f in found for k in f if k != "reason"}):
            rows = [f[kind] for f in found if kind in f and "reason" not in f[kind]]
            out[kind] = {how: stats.share(sum(row[how] for row in rows), len(rows))
                         for how in ("removed", "steered", "control_removed")}
            out[kind]["no_late_units"] = sum(1 for f in found if "reason" in f.get(kind, {}))
        return out


register(Forgotten())
