"""The move evaluator (Lai 2015, section 6): P(this move is the best one) from the parent's
363 features, the move's features and its rank among the legal moves.

The rank is the paper's two-pass process: first every move is scored as if it were ranked
best (rank features 0), the moves are ordered by those scores, and every move is scored
again with its rank. The rank is two numbers, as in the reference code before its release:
place / number of moves and min(place, 20) / 20. The paper says the rank helped; the released
code always passed zeros (research note B1): we follow the paper. Both passes are trained
(``first`` is returned for the loss): with only the second trained, the ranks it reads come
from its own untrained first pass and training chases them (4 labelled positions were not
learnt in 300 epochs).
"""

from __future__ import annotations

import torch
from torch import nn

from analysis.encoding.giraffe.features import BOARD_FEATURES, GLOBAL_SIZE, PIECE_SIZE, SQUARE_SIZE
from analysis.encoding.giraffe.moves import MOVE_FEATURES
from analysis.models.giraffe.config import GiraffeConfig
from analysis.models.giraffe.grouped import split_groups

RANK_FEATURES = 2
RANK_CAP = 20
NO_MOVE = -1e4  # the logit of a padding row: sigmoid 0


def rank_features(logits: torch.Tensor, exists: torch.Tensor) -> torch.Tensor:
    """(B, M) first-pass logits and real-move mask -> (B, M, 2) rank features (0 for the best)."""
    masked = torch.where(exists, logits, torch.full_like(logits, float("-inf")))
    order = masked.argsort(dim=-1, descending=True, stable=True)
    place = order.argsort(dim=-1).to(logits.dtype)           # (B, M) 0 = ranked first
    count = exists.sum(dim=-1, keepdim=True).clamp_min(1).to(logits.dtype)
    rank = torch.stack([place / count, place.clamp_max(RANK_CAP) / RANK_CAP], dim=-1)
    return rank * exists.unsqueeze(-1)


class MoveEvaluatorNet(nn.Module):
    def __init__(self, config: GiraffeConfig):
        super().__init__()
        g, p, s = config.move_global_units, config.move_piece_units, config.move_square_units
        # The move's own features join the global group (as the reference code groups them).
        self.global_in = nn.Linear(GLOBAL_SIZE, g)
        self.move_in = nn.Linear(MOVE_FEATURES + RANK_FEATURES, g, bias=False)
        self.piece_in = nn.Linear(PIECE_SIZE, p)
        self.square_in = nn.Linear(SQUARE_SIZE, s)
        self.hidden = nn.Linear(g + p + s, config.move_hidden)
        self.out = nn.Linear(config.move_hidden, 1)

    def _pass(self, board_parts: tuple[torch.Tensor, torch.Tensor, torch.Tensor], moves: torch.Tensor,
              rank: torch.Tensor) -> torch.Tensor:
        g, p, s = board_parts  # (B, 1, g) (B, 1, p) (B, 1, s): once per board, shared by its moves
        m = self.move_in(torch.cat([moves, rank], dim=-1))        # (B, M, g)
        count = moves.shape[1]
        h = torch.relu(torch.cat([g + m, p.expand(-1, count, -1), s.expand(-1, count, -1)], dim=-1))
        h = torch.relu(self.hidden(h))                             # (B, M, move_hidden)
        return self.out(h).squeeze(-1)                             # (B, M) logits

    def forward(self, board: torch.Tensor, moves: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """board (B, 363), moves (B, M, 15) -> (B, M) logits of P(best) from the second pass and
        from the first; padding rows get NO_MOVE."""
        assert board.shape[-1] == BOARD_FEATURES
        gf, pf, sf = split_groups(board)
        parts = (self.global_in(gf).unsqueeze(1), self.piece_in(pf).unsqueeze(1), self.square_in(sf).unsqueeze(1))
        exists = moves[..., 0] > 0.5                               # (B, M)
        zero_rank = moves.new_zeros(*moves.shape[:2], RANK_FEATURES)
        first = self._pass(parts, moves, zero_rank)                # every move as if ranked best
        logits = self._pass(parts, moves, rank_features(first.detach(), exists))
        no_move = torch.full_like(logits, NO_MOVE)
        return torch.where(exists, logits, no_move), torch.where(exists, first, no_move)
