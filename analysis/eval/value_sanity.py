"""Value sanity suite: positions whose value anyone can check by eye, with stated tolerances.

Checks (scores are expected scores; "for White" turns the side to move's score
into White's):

- the start position within ``START_BAND`` for White (the target of issue 9);
- quiet opening lines, reached by their moves (so the network sees real
  history), within ``QUIET_OPENING_BAND`` for White;
- mirrored positions (colours swapped, the history mirrored move by move, so
  the other colour is to move) give the side to move the same score within
  ``MIRROR_TOLERANCE``, for each quiet opening. The FEN-only forms are always
  compared; the forms with history only when it is full (7 plies): with less,
  the real line starts at the standard start position, whose missing history
  is zero in lc0's encoding, while the mirrored line does not, so their planes
  differ for a reason that has nothing to do with colour (the same holds for
  the start position itself, which therefore has no mirror check);
- each opening with and without its move history (FEN only) within
  ``HISTORY_TOLERANCE``;
- mate in one for the side to move: the network's score at least ``MATE_IN_ONE_MIN``;
- checkmated and stalemated positions: the Evaluator itself returns the
  network's raw value there (the network never saw a finished position in
  training, so that number means nothing); the site shows the rules' result
  and every search scores such a root by the rules. The suite therefore checks
  that every search in ``analysis.search`` gives the rules' score (0 when mated,
  0.5 when stalemated) and no move with this evaluator, and reports the raw
  value in the detail without judging it.

``run_sanity`` returns the shape stored under the checkpoint metric
``value_sanity``: {"passed", "checks": [{"name", "passed", "detail"}], "suite_version"}.
"""

from __future__ import annotations

import chess

from analysis.data.held_out import MATE_IN_ONE, Line
from analysis.search import Budget, run_search, search_names

SUITE_VERSION = 1
# Issue 9's target for the start position, White's view (Stockfish 15.1 at depth 14: 0.535).
START_BAND = (0.45, 0.60)
# Stockfish 15.1 at depth 14 puts every line below at 0.53-0.55 for White (+31 to +59 cp);
# +-0.12 leaves room for a small network's noise while failing the per-ply alternation of
# issue 9 (0.70-0.89 with White to move, 0.21-0.49 with Black to move).
QUIET_OPENING_BAND = (0.40, 0.65)
# The same position for the mover: only the side-to-move plane differs, so any gap is a
# colour bias. 0.05 per position is looser than the 0.02 target for the mean bias, since
# one position is noisier than an average over a test split.
MIRROR_TOLERANCE = 0.05
# History legitimately adds information (last moves, repetitions), so the two forms may
# differ a little; 0.10 (about 40 cp near an even score) is more than a quiet position's
# history should ever be worth, and far less than the start-position failure of issue 9.
HISTORY_TOLERANCE = 0.10
# Mate in one for the mover is a won position (Stockfish: 1.0). A value network is not a
# mate search, so 0.70 asks only that it clearly favours the mover (above every band above).
MATE_IN_ONE_MIN = 0.70
# Searches run on finished positions with this budget: they must answer from the rules at once.
TERMINAL_BUDGET = Budget(nodes=16)


START = Line("start position", "")
QUIET_OPENINGS = [
    Line("1.e4", "e2e4"),
    Line("1.e4 e5", "e2e4 e7e5"),
    Line("1.d4 d5", "d2d4 d7d5"),
    Line("1.e4 e5 2.Nf3", "e2e4 e7e5 g1f3"),
    Line("Queen's Gambit Declined, 6.Nf3", "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6 c1g5 f8e7 e2e3 e8g8 g1f3"),
    Line("Sicilian Najdorf, 5...a6", "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6"),
    Line("Ruy Lopez, closed, 8...O-O",
         "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 a4b3 d7d6 c2c3 e8g8"),
]
_STALEMATE = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"
FINISHED = [
    Line("checkmated: White after Fool's mate", "f2f3 e7e5 g2g4 d8h4"),
    Line("checkmated: Black after Scholar's mate", "e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7"),
    Line("stalemated: Black", "", _STALEMATE),
    Line("stalemated: White", "", chess.Board(_STALEMATE).mirror().fen()),
]


def mirrored(board: chess.Board) -> chess.Board:
    """Colours swapped and the board flipped, history included (move by move)."""
    out = board.root().mirror()
    for move in board.move_stack:
        out.push(chess.Move(chess.square_mirror(move.from_square), chess.square_mirror(move.to_square),
                            move.promotion))
    return out


def fen_only(board: chess.Board) -> chess.Board:
    return chess.Board(board.fen())


def for_white(board: chess.Board, score: float) -> float:
    return score if board.turn == chess.WHITE else 1.0 - score


def _check(name: str, passed: bool, detail: str) -> dict:
    return {"name": name, "passed": bool(passed), "detail": detail}


def _in_band(name: str, board: chess.Board, score: float, band: tuple[float, float]) -> dict:
    white = for_white(board, score)
    return _check(name, band[0] <= white <= band[1], f"{white:.3f} for White (band {band[0]:.2f}-{band[1]:.2f})")


class _Scores:
    """Every board the suite needs, evaluated in one fixed batch (so reruns give the same numbers)."""

    def __init__(self, evaluator, boards: list[chess.Board]):
        self._scores = {id(b): ev.score for b, ev in zip(boards, evaluator.evaluate(boards))}

    def __getitem__(self, board: chess.Board) -> float:
        return self._scores[id(board)]


def _mirror_check(line: Line, board: chess.Board, pairs: list[tuple[str, chess.Board, chess.Board]],
                  scores: _Scores) -> dict:
    parts, gaps = [], []
    for form, original, swapped in pairs:
        a, b = scores[original], scores[swapped]
        gaps.append(abs(a - b))
        parts.append(f"{a:.3f} vs mirrored {b:.3f} ({form})")
    return _check(f"mirrored: {line.name}", max(gaps) <= MIRROR_TOLERANCE,
                  "side to move " + "; ".join(parts) + f"; tolerance {MIRROR_TOLERANCE:.2f}")


def _terminal_check(line: Line, board: chess.Board, evaluator, raw: float) -> dict:
    expected = 0.0 if board.is_checkmate() else 0.5
    results = {name: run_search(name, board, evaluator, budget=TERMINAL_BUDGET) for name in search_names()}
    wrong = [f"{n} {r.score:.3f}" + (f" plays {r.best_move.uci()}" if r.best_move else "")
             for n, r in results.items() if r.score != expected or r.best_move is not None]
    detail = (f"rules' score {expected:.1f} for the side to move from every search" if not wrong
              else f"expected {expected:.1f}, got: {', '.join(wrong)}")
    return _check(line.name, not wrong, detail + f" (network's raw value {raw:.3f}, not judged)")


def run_sanity(evaluator) -> dict:
    """Run every check with ``evaluator``; the result is JSON-ready (see the module docstring)."""
    openings = [(line, line.board()) for line in QUIET_OPENINGS]
    mirror_pairs = {}
    for line, board in openings:
        pairs = [("FEN only", fen_only(board), mirrored(fen_only(board)))]
        if len(board.move_stack) >= 7:
            pairs.append(("with history", board, mirrored(board)))
        mirror_pairs[line.name] = pairs
    history = {line.name: fen_only(board) for line, board in openings}
    mates = [(line, line.board()) for line in MATE_IN_ONE]
    finished = [(line, line.board()) for line in FINISHED]
    start = START.board()

    boards = [start] + [b for _, b in openings] + list(history.values()) + [b for _, b in mates + finished]
    boards += [b for pairs in mirror_pairs.values() for _, x, y in pairs for b in (x, y)]
    scores = _Scores(evaluator, boards)

    checks = [_in_band("start position", start, scores[start], START_BAND)]
    checks += [_in_band(f"quiet opening: {line.name}", b, scores[b], QUIET_OPENING_BAND) for line, b in openings]
    checks += [_mirror_check(line, b, mirror_pairs[line.name], scores) for line, b in openings]
    for line, board in openings:
        a, b = scores[board], scores[history[line.name]]
        checks.append(_check(f"history: {line.name}", abs(a - b) <= HISTORY_TOLERANCE,
                             f"side to move {a:.3f} with history, {b:.3f} FEN only; tolerance {HISTORY_TOLERANCE:.2f}"))
    for line, board in mates:
        s = scores[board]
        checks.append(_check(f"mate in 1: {line.name}", s >= MATE_IN_ONE_MIN,
                             f"side to move {s:.3f} (at least {MATE_IN_ONE_MIN:.2f})"))
    checks += [_terminal_check(line, board, evaluator, scores[board]) for line, board in finished]
    return {"passed": all(c["passed"] for c in checks), "checks": checks, "suite_version": SUITE_VERSION}
