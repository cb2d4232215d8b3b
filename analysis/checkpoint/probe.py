"""Run a freshly loaded network on a few positions: its answers must be finite.

Weights full of NaN or infinity load without complaint (their shapes are right)
and then spoil every evaluation. The probe finds them when a checkpoint is
registered, before anyone analyses with it.
"""

from __future__ import annotations

import torch

from analysis.checkpoint import CheckpointError, CheckpointMeta
from analysis.evaluator import NonFiniteOutput
from analysis.models.inference import TorchEvaluator
from analysis.positions import board_from_fen

# White and black to move, castling and en passant, a middlegame, an endgame, a promotion:
# together they touch every input plane a game can set.
PROBE_FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R b KQkq - 0 5",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/1P6/8/8/8/2k5/8/4K2R w K - 37 70",
)


def probe_network(model: torch.nn.Module, meta: CheckpointMeta, label: str) -> None:
    """Raise ``CheckpointError`` naming ``label`` when any output on the probe positions is not finite."""
    evaluator = TorchEvaluator(model, device="cpu", name="the network", trained=meta.trained,
                               encoding=meta.input_encoding)
    boards = [board_from_fen(fen) for fen in PROBE_FENS]
    try:
        evaluator.evaluate(boards, attention=evaluator.capabilities.attention is not None)
    except NonFiniteOutput as exc:
        raise CheckpointError(f"{label}: {exc}") from None
    except ValueError as exc:  # a network that cannot take 8x8 chess (e.g. one for 5x5 Gardner chess)
        raise CheckpointError(f"{label}: does not play 8x8 chess: {exc}") from None
