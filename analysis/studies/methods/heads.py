"""``heads``: the look-ahead paper's head experiments (Jenner et al. 2024, section 3.2), per puzzle.

On the look-ahead set's kept puzzles (built with the ``sparring`` net; puzzles whose corruption touches
the 1st or 3rd target skipped, as ``lookahead`` skips them), every effect is the drop in log-odds of the
clean top move:

(a) *head patching*: each head's write taken from the corrupted pass into the clean one (``HeadPatch``);
(b) *single entry*: in every head, its one post-softmax weight with query = 1st-move target and key =
    3rd-move target set to 0 (``AttentionZero``, no renormalising), against all its OTHER entries set
    to 0; the summary reads both in the head (a) ranks first;
(c) *piece-movement heads*: the key column of the 3rd-move target zeroed (the 3rd move's own source ->
    target entry protected) in the heads the head atlas labels with the 3rd-moving piece's movement
    pattern ("knight-moves", ...), against the same in the heads labelled with the other pieces'
    patterns, and against a random square's column (seeded by (seed, item)) in the piece's own heads.

Per layer, (a) and (b) run as one batched forward of 3 x heads variants. The heads are chosen by
Sightline's atlas (``analysis.heads.atlas``), computed once a run, where the paper curated them by hand.
Layers and heads count from 0 (``L0 H0``, docs/lens.md#words).
"""

from __future__ import annotations

import chess
import numpy as np
import torch

from analysis.heads.patterns import MOVEMENT, PIECE_NAMES
from analysis.studies import stats
from analysis.studies.errors import StudyInputError
from analysis.studies.lookahead_set import REASONS, build, from_fen
from analysis.studies.methods import StudyContext, StudyMethod, register
from analysis.studies.methods.lookahead import rules_of
from analysis.studies.positions import Item

PIECE_GROUPS = ("main", "other", "random")


def head_name(layer: int, head: int) -> str:
    return f"L{layer} H{head}"


def zero_entries(variants: int, rows: dict[int, list[tuple[int, int]]], column: dict[int, tuple[int, int]]) -> torch.Tensor:
    """(V, 64, 64) bool: variant v zeroes each (query, key) in ``rows[v]``, and the key column
    ``column[v] = (key, protected query)`` except its protected entry."""
    entries = torch.zeros(variants, 64, 64, dtype=torch.bool)
    for v, pairs in rows.items():
        for q, k in pairs:
            entries[v, q, k] = True
    for v, (key, protected) in column.items():
        entries[v, :, key] = True
        entries[v, protected, key] = False
    return entries


def third_piece(fen: str, first: str, reply: str, third: str) -> str:
    """The movement pattern of the piece that plays the 3rd move ("knight-moves", ...)."""
    board = from_fen(fen)
    board.push_uci(first)
    board.push_uci(reply)
    piece = board.piece_at(chess.Move.from_uci(third).from_square)
    return f"{PIECE_NAMES[piece.piece_type]}-moves"


class Heads(StudyMethod):
    name = "heads"

    def prepare(self, context: StudyContext) -> None:
        from analysis.heads.atlas import AtlasConfig, compute_atlas

        if context.settings.atlas_positions < 1:
            raise StudyInputError("atlas_positions must be at least 1")
        self.load_sparring(context)
        try:
            atlas = compute_atlas(context.evaluator, AtlasConfig(positions=context.settings.atlas_positions))
            context.state["labels"] = atlas.labels
        except ValueError as exc:  # no attention maps: the piece-movement test says why
            context.state["labels"], context.state["no_labels"] = None, str(exc)

    def measure(self, context: StudyContext, item: Item) -> dict:
        puzzle = build(item, context.evaluator, context.state["sparring"], rules_of(context.settings))
        if not puzzle["kept"]:
            return {k: v for k, v in puzzle.items() if k in ("kept", "eligible", "reason")}
        first, third = chess.Move.from_uci(puzzle["first"]), chess.Move.from_uci(puzzle["third"])
        keep = {k: puzzle[k] for k in ("kept", "eligible", "fen", "corrupted_fen", "first", "third")}
        if {first.to_square, third.to_square} & set(puzzle["corrupted_squares"]):
            return {**keep, "analysed": False, "skip": "the corruption touches the 1st or 3rd target"}
        choices = [s for s in chess.SQUARES if s not in (third.to_square, third.from_square)]
        random_square = int(choices[int(context.rng(item).integers(len(choices)))])
        line = (puzzle["first"], item.moves[1], puzzle["third"])
        effects = head_effects(context.adapter, puzzle["fen"], puzzle["corrupted_fen"], line,
                               context.state["labels"], random_square)
        note = {"piece_note": context.state["no_labels"]} if context.state["labels"] is None else {}
        return {**keep, "analysed": True, **effects, **note}

    def summarise(self, context: StudyContext, results: list[dict]) -> dict:
        analysed = [r for r in results if r.get("analysed")]
        units = context.adapter.units["head"]
        patching = [[stats.mean_se([r["head_patch"][l][h] for r in analysed]) for h in range(units.per_layer)]
                    for l in range(units.layers)]
        ranked = sorted(((l, h) for l in range(units.layers) for h in range(units.per_layer)),
                        key=lambda u: -(patching[u[0]][u[1]]["mean"] or 0.0))
        top = [{"head": head_name(l, h), "layer": l, "index": h, **_cell(patching[l][h])}
               for l, h in ranked[:context.settings.top]] if analysed else []
        single = _single_entry(analysed, ranked[0], context.settings.threshold) if analysed else None
        pieces = {g: _spread([r["piece_drops"][g] for r in analysed if r["piece_drops"][g] is not None])
                  for g in PIECE_GROUPS}
        table = [{"measure": f"head patching, rank {i}: {t['head']}", "drop": _cell(t)} for i, t in enumerate(top)]
        if single:
            table += [{"measure": f"{single['head']}: the single entry zeroed", "hits": single["single"]["hits"],
                       "drop": single["single"]["drop"]},
                      {"measure": f"{single['head']}: all other entries zeroed", "hits": single["others"]["hits"],
                       "drop": single["others"]["drop"]},
                      {"measure": f"{single['head']}: single entry hurts more than all others",
                       "hits": single["single_above_others"]}]
        table += [{"measure": f"piece-movement heads: {g}", "median": pieces[g]["median"], "p95": pieces[g]["p95"],
                   "drop": pieces[g]["drop"]} for g in PIECE_GROUPS]
        dropped = {reason: sum(1 for r in results if r.get("reason") == reason) for reason in REASONS}
        summary = {"puzzles": {"eligible": sum(bool(r.get("eligible")) for r in results),
                               "kept": sum(bool(r.get("kept")) for r in results), "analysed": len(analysed),
                               "dropped": dropped},
                   "heads": {"patching": [[_cell(c) for c in row] for row in patching], "top": top,
                             "single_entry": single, "piece_movement": pieces,
                             "piece_heads": _heads_used(analysed)}}
        summary["table"], summary["figures"] = table, _figures(patching, pieces)
        return summary


def _cell(cell: dict) -> dict:
    return {"mean": cell["mean"], "se": cell["se"]}


def _single_entry(analysed: list[dict], unit: tuple[int, int], threshold: float) -> dict:
    layer, head = unit
    single = [r["single_entry"][layer][head] for r in analysed]
    others = [r["other_entries"][layer][head] for r in analysed]
    n = len(single)
    return {"head": head_name(layer, head), "threshold": threshold,
            "single": {"hits": stats.share(sum(d > threshold for d in single), n), "drop": _cell(stats.mean_se(single))},
            "others": {"hits": stats.share(sum(d > threshold for d in others), n), "drop": _cell(stats.mean_se(others))},
            "single_above_others": stats.share(sum(s > o for s, o in zip(single, others)), n)}


def _spread(values: list[float]) -> dict:
    """Median, 95th percentile and mean ± s.e. of a group's drops."""
    if not values:
        return {"n": 0, "median": None, "p95": None, "drop": {"mean": None, "se": None}}
    x = np.asarray(values, dtype=float)
    return {"n": int(x.size), "median": float(np.median(x)), "p95": float(np.percentile(x, 95)),
            "drop": _cell(stats.mean_se(values))}


def _heads_used(analysed: list[dict]) -> dict:
    """Movement pattern -> the heads the atlas gave it, as the items recorded them (so a resumed run,
    which computes no atlas, summarises the same)."""
    out: dict[str, list[str]] = {}
    for r in analysed:
        out.setdefault(r["piece"], r["piece_heads"]["main"])
    return dict(sorted(out.items()))


def _label_counts(labels: list[list[str]]) -> dict:
    """Movement pattern -> the heads the atlas gives it (the piece test's head groups)."""
    return {pattern: [head_name(l, h) for l, row in enumerate(labels) for h, lab in enumerate(row) if lab == pattern]
            for pattern in MOVEMENT}


def _figures(patching: list[list[dict]], pieces: dict) -> list[dict]:
    heads = list(range(len(patching[0]))) if patching else []
    series = [{"label": f"layer {l}", "y": [c["mean"] for c in row],
               "low": [None if c["mean"] is None else c["mean"] - 2 * c["se"] for c in row],
               "high": [None if c["mean"] is None else c["mean"] + 2 * c["se"] for c in row]}
              for l, row in enumerate(patching)]
    groups = ["piece's own heads", "other pieces' heads", "random square"]
    spread = [{"label": label, "y": [pieces[g][key] for g in PIECE_GROUPS], "low": [None] * 3, "high": [None] * 3}
              for key, label in (("median", "median"), ("p95", "95th percentile"))]
    return [{"name": "head_patching", "title": "Head patching: log-odds drop of the top move per head",
             "ylabel": "log-odds drop", "x": heads, "series": series},
            {"name": "piece_heads", "title": "Zeroing the 3rd-move target's key column",
             "ylabel": "log-odds drop", "x": groups, "series": spread}]


def head_effects(adapter, fen: str, corrupted_fen: str, line: tuple[str, str, str], labels: list[list[str]] | None,
                 random_square: int) -> dict:
    """One puzzle's three tests: the clean top move, the (a)/(b) grids (layers x heads) and the (c)
    drops. Clean and corrupted are prepared the same way, from their FENs alone."""
    first, third = chess.Move.from_uci(line[0]), chess.Move.from_uci(line[2])
    clean = adapter.prepare(from_fen(fen))
    dirty = adapter.aligned(adapter.prepare(from_fen(corrupted_fen)), clean)
    piece = third_piece(fen, *line)
    with torch.no_grad():
        _, out = adapter.run(clean)
        top = int(out.logits[0].argmax())
        grids = layer_tests(adapter, clean, dirty, top, first.to_square, third.to_square)
        pieces = piece_test(adapter, clean, top, labels, piece, third, random_square)
    return {"top": clean.moves[top].uci(), **grids, "piece": piece, **pieces}


def drops(adapter, clean, top: int, variants: int, patches: list) -> list[float]:
    """The clean top move's log-odds drop in each of ``variants`` patched copies (one forward each way)."""
    from analysis.lens.patching import log_odds

    _, out = adapter.run(clean)
    base = log_odds(out.logits, top)
    _, out = adapter.run(clean, variants=variants, patches=patches)
    return (base - log_odds(out.logits, top)).float().cpu().tolist()


def layer_tests(adapter, clean, dirty, top: int, q: int, k: int) -> dict:
    """(a) and (b): per layer one forward of 3H variants (each head's write from the corrupted pass;
    each head's single (q, k) entry zeroed; each head's other entries zeroed)."""
    from analysis.models.lens import AttentionZero, HeadPatch

    units = adapter.units["head"]
    heads = units.per_layer
    grids: dict = {"head_patch": [], "single_entry": [], "other_entries": []}
    for layer in range(units.layers):
        chosen = torch.zeros(3 * heads, heads, dtype=torch.bool)
        chosen[torch.arange(heads), torch.arange(heads)] = True
        patches = [HeadPatch(layer, adapter.capture_heads(dirty, layer), chosen)]
        for h in range(heads):
            entries = zero_entries(3 * heads, {heads + h: [(q, k)]}, {})
            entries[2 * heads + h] = True
            entries[2 * heads + h, q, k] = False
            patches.append(AttentionZero(layer, h, entries))
        row = drops(adapter, clean, top, 3 * heads, patches)
        for i, name in enumerate(grids):
            grids[name].append([round(d, 6) for d in row[i * heads:(i + 1) * heads]])
    return grids


def piece_groups(labels: list[list[str]], piece: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The heads the atlas labels with ``piece``'s movement pattern, and those with another piece's."""
    main = [(l, h) for l, row in enumerate(labels) for h, label in enumerate(row) if label == piece]
    other = [(l, h) for l, row in enumerate(labels) for h, label in enumerate(row) if label in MOVEMENT and label != piece]
    return main, other


def piece_test(adapter, clean, top: int, labels: list[list[str]] | None, piece: str, third: chess.Move,
               random_square: int) -> dict:
    """(c): variants main / other / random, each zeroing one key column (its entry from the 3rd move's
    source protected) in its group's heads; a group without heads gives None."""
    from analysis.models.lens import AttentionZero

    if labels is None:
        return {"piece_drops": {g: None for g in PIECE_GROUPS}, "piece_heads": {"main": [], "other": []}}
    main, other = piece_groups(labels, piece)
    target, source = third.to_square, third.from_square
    patches = []
    for layer, head in sorted(set(main) | set(other)):
        columns = {}
        if (layer, head) in main:
            columns.update({0: (target, source), 2: (random_square, source)})
        if (layer, head) in other:
            columns[1] = (target, source)
        patches.append(AttentionZero(layer, head, zero_entries(3, {}, columns)))
    row = drops(adapter, clean, top, 3, patches) if patches else [None] * 3
    present = {"main": bool(main), "other": bool(other), "random": bool(main)}
    return {"piece_drops": {g: round(d, 6) if present[g] else None for g, d in zip(PIECE_GROUPS, row)},
            "piece_heads": {"main": [head_name(*u) for u in main], "other": [head_name(*u) for u in other]},
            "random_square": chess.square_name(random_square)}


register(Heads())
