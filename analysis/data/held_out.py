"""Positions no generated dataset may contain, and the ``Line`` they are written as.

The value-sanity suite's mate-in-one checks (``analysis.eval.value_sanity``) ask whether a
network *learnt* what a mate in one looks like; ``analysis.data.plan`` drops these positions
(and their mirrors) so no dataset can teach the answers themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess


@dataclass(frozen=True)
class Line:
    """A position reached from a FEN by UCI moves (its history)."""

    name: str
    moves: str
    fen: str = chess.STARTING_FEN

    def board(self) -> chess.Board:
        board = chess.Board(self.fen)
        for uci in self.moves.split():
            board.push_uci(uci)
        return board


_BACK_RANK = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"
MATE_IN_ONE = [
    Line("Scholar's mate, White to play Qxf7#", "e2e4 e7e5 f1c4 b8c6 d1h5 g8f6"),
    Line("Fool's mate, Black to play Qh4#", "f2f3 e7e5 g2g4"),
    Line("back rank, White to play Rd8#", "", _BACK_RANK),
    Line("back rank, Black to play Rd1#", "", chess.Board(_BACK_RANK).mirror().fen()),
]


def held_out_keys() -> set[str]:
    """Position keys (``board.epd()``) of ``MATE_IN_ONE`` and their mirrors."""
    boards = [line.board() for line in MATE_IN_ONE]
    return {b.epd() for b in boards} | {b.mirror().epd() for b in boards}
