"""5x5 Gardner chess (pgx's ``gardner_chess``, the paper's small board) on python-chess.

No well-kept Python library plays Gardner chess (python-chess's variants do
not include it), so ``GardnerBoard`` is python-chess's ``Board`` with its
pieces in the a1-e5 corner: its bitboard move generation, masked to that
corner, with three changes: no pawn double step (so no en passant), white
pawns promote on the 5th rank, and no castling (the FEN refuses rights). The
game ends (``outcome``) on checkmate, stalemate, insufficient material,
threefold repetition, 100 plies without progress or 256 plies, all automatic
draws as in pgx.

FENs are 5x5: ``rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1`` is the start.
"""

from __future__ import annotations

from typing import Iterator

import chess

GARDNER_START = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"
SIZE = 5
MAX_PLIES = 256  # pgx turns the 256th ply into a draw
BB_GARDNER = 0
for _rank in range(SIZE):
    for _file in range(SIZE):
        BB_GARDNER |= chess.BB_SQUARES[chess.square(_file, _rank)]
_PROMOTION_RANK = chess.BB_RANK_5
_PROMOTIONS = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)


def parse_gardner_fen(fen: str) -> tuple[dict[int, chess.Piece], str, int, int]:
    """(pieces, side to move, halfmove clock, fullmove number) of a 5x5 FEN; ValueError with the reason."""
    fields = fen.strip().split()
    if len(fields) != 6:
        raise ValueError(f"a Gardner FEN has 6 fields, not {len(fields)}: {fen!r}")
    rows, turn, castling, ep, halfmove, fullmove = fields
    rows = rows.split("/")
    if len(rows) != SIZE:
        raise ValueError(f"a Gardner FEN has 5 ranks, not {len(rows)}: {fen!r}")
    pieces: dict[int, chess.Piece] = {}
    for k, row in enumerate(rows):
        rank, file = SIZE - 1 - k, 0
        for char in row:
            if char.isdigit():
                file += int(char)
            elif char in "pnbrqkPNBRQK" and file < SIZE:
                pieces[chess.square(file, rank)] = chess.Piece.from_symbol(char)
                file += 1
            else:
                raise ValueError(f"rank {rank + 1} of the Gardner FEN {fen!r} has {char!r}")
        if file != SIZE:
            raise ValueError(f"rank {rank + 1} of the Gardner FEN {fen!r} is {file} squares long, not 5")
    if turn not in ("w", "b"):
        raise ValueError(f"side to move must be w or b in {fen!r}")
    if castling != "-" or ep != "-":
        raise ValueError(f"Gardner chess has no castling or en passant: {fen!r}")
    if not (halfmove.isdigit() and fullmove.isdigit() and int(fullmove) >= 1):
        raise ValueError(f"bad move counters in {fen!r}")
    return pieces, turn, int(halfmove), int(fullmove)


class GardnerBoard(chess.Board):
    """A Gardner position; the analysis code reads ``board_size`` to pick the 5x5 graph."""

    board_size = SIZE
    starting_fen = GARDNER_START
    uci_variant = "gardner"

    def __init__(self, fen: str | None = GARDNER_START, *, chess960: bool = False) -> None:
        if chess960:
            raise ValueError("Gardner chess has no Chess960 form")
        super().__init__(fen)

    def reset(self) -> None:
        self.set_fen(GARDNER_START)

    def set_fen(self, fen: str) -> None:
        pieces, turn, halfmove, fullmove = parse_gardner_fen(fen)
        self.clear()
        self.set_piece_map(pieces)
        self.turn = turn == "w"
        self.castling_rights = chess.BB_EMPTY
        self.ep_square = None
        self.halfmove_clock, self.fullmove_number = halfmove, fullmove
        problems = self.status() & ~chess.STATUS_BAD_CASTLING_RIGHTS
        if self.pawns & (chess.BB_RANK_1 | _PROMOTION_RANK):
            raise ValueError(f"a pawn stands on a first or last rank in {fen!r}")
        if problems & (chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING | chess.STATUS_TOO_MANY_KINGS
                       | chess.STATUS_OPPOSITE_CHECK):
            raise ValueError(f"the Gardner FEN {fen!r} is not a legal position")

    def board_fen(self, *, promoted: bool | None = False) -> str:
        rows = []
        for rank in range(SIZE - 1, -1, -1):
            row, empty = "", 0
            for file in range(SIZE):
                piece = self.piece_at(chess.square(file, rank))
                if piece is None:
                    empty += 1
                    continue
                row += (str(empty) if empty else "") + piece.symbol()
                empty = 0
            rows.append(row + (str(empty) if empty else ""))
        return "/".join(rows)

    def generate_pseudo_legal_moves(self, from_mask: int = chess.BB_ALL, to_mask: int = chess.BB_ALL) -> Iterator[chess.Move]:
        for move in super().generate_pseudo_legal_moves(from_mask, to_mask & BB_GARDNER):
            if self.pawns & chess.BB_SQUARES[move.from_square]:
                if abs(move.to_square - move.from_square) == 16:
                    continue  # no double step
                if self.turn == chess.WHITE and chess.BB_SQUARES[move.to_square] & _PROMOTION_RANK:
                    for piece in _PROMOTIONS:
                        yield chess.Move(move.from_square, move.to_square, piece)
                    continue
            yield move

    def generate_legal_moves(self, from_mask: int = chess.BB_ALL, to_mask: int = chess.BB_ALL) -> Iterator[chess.Move]:
        # The king's evasions come straight from its attack table: mask them too.
        return super().generate_legal_moves(from_mask, to_mask & BB_GARDNER)

    def generate_pseudo_legal_ep(self, from_mask: int = chess.BB_ALL, to_mask: int = chess.BB_ALL) -> Iterator[chess.Move]:
        return iter(())

    def generate_castling_moves(self, from_mask: int = chess.BB_ALL, to_mask: int = chess.BB_ALL) -> Iterator[chess.Move]:
        return iter(())

    def is_pseudo_legal(self, move: chess.Move) -> bool:
        if not move or not (chess.BB_SQUARES[move.from_square] & self.occupied_co[self.turn]):
            return False
        return move in self.generate_pseudo_legal_moves(chess.BB_SQUARES[move.from_square],
                                                        chess.BB_SQUARES[move.to_square])

    def outcome(self, *, claim_draw: bool = False) -> chess.Outcome | None:
        """pgx's ends: mate, stalemate, insufficient material, threefold, 100 quiet plies, 256 plies."""
        if self.is_checkmate():
            return chess.Outcome(chess.Termination.CHECKMATE, not self.turn)
        if self.is_insufficient_material():
            return chess.Outcome(chess.Termination.INSUFFICIENT_MATERIAL, None)
        if not any(self.generate_legal_moves()):
            return chess.Outcome(chess.Termination.STALEMATE, None)
        if self.halfmove_clock >= 100:
            return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
        if self.is_repetition(3):
            return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
        if self.ply() >= MAX_PLIES:
            return chess.Outcome(chess.Termination.VARIANT_DRAW, None)
        return None

    def mirror(self) -> "GardnerBoard":
        """The colour-swapped position, mirrored within the 5x5 board."""
        board = GardnerBoard(None)
        for square, piece in self.piece_map().items():
            mirrored = chess.square(chess.square_file(square), SIZE - 1 - chess.square_rank(square))
            board.set_piece_at(mirrored, chess.Piece(piece.piece_type, not piece.color))
        board.turn = not self.turn
        board.halfmove_clock, board.fullmove_number = self.halfmove_clock, self.fullmove_number
        return board
