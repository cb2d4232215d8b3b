"""One evaluation API for every model family.

Searches, the CLI, the workers and the site all talk to an ``Evaluator``: a
list of boards in, a list of ``Evaluation`` out, one forward pass per call.
Scores are always from the side to move's point of view.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Hashable, Mapping, Protocol, Sequence, runtime_checkable

import chess
import numpy as np

from analysis.material import material_balance


@dataclass
class Evaluation:
    """What a model says about one position, from the side to move's view.

    ``score`` is the expected score in [0, 1] (win = 1, draw = 0.5).
    ``policy`` covers legal moves only and sums to 1 (empty when there is no
    legal move or the model has no policy). ``attention``, when asked for, has
    shape (layers, heads, 64, 64) indexed by real squares (a1 = 0 ... h8 = 63).
    """

    score: float
    wdl: tuple[float, float, float] | None = None
    policy: dict[chess.Move, float] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    attention: np.ndarray | None = None

    def top_moves(self, n: int = 5) -> list[tuple[chess.Move, float]]:
        return sorted(self.policy.items(), key=lambda kv: kv[1], reverse=True)[:n]

    def best_move(self) -> chess.Move | None:
        return max(self.policy, key=self.policy.__getitem__) if self.policy else None


class NonFiniteOutput(ValueError):
    """A network answered NaN or infinity for a position: nothing it says there can be used.

    Raised instead of passing such numbers on, where they break searches (division by
    NaN visit weights) and cannot be stored as JSON.
    """


@dataclass(frozen=True)
class Capabilities:
    """What a network's outputs offer; ``attention`` is (layers, heads), or None without maps.

    ``attention_support``: None when any square may attend to any other; "moves" when a
    map is zero by construction except between squares a queen or knight move apart (a
    graph network's edges), so a page can tell "no edge" from "not attended".
    """

    policy: bool = False
    value: bool = True
    wdl: bool = False
    action_values: bool = False
    attention: tuple[int, int] | None = None
    attention_support: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["attention"] = list(self.attention) if self.attention else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Capabilities":
        attention = data.get("attention")
        return cls(policy=bool(data.get("policy")), value=bool(data.get("value", True)),
                   wdl=bool(data.get("wdl")), action_values=bool(data.get("action_values")),
                   attention=(int(attention[0]), int(attention[1])) if attention else None,
                   attention_support=data.get("attention_support") or None)


class NoActionValues(ValueError):
    """``evaluate_actions`` asked of an evaluator whose capabilities have no action values."""


ValueOnly = Callable[[chess.Board], float]


@runtime_checkable
class Evaluator(Protocol):
    """Anything that scores positions in batches; ``capabilities`` says which outputs it has.

    ``value_only``: a path to one position's value alone (in [-1, 1] for the side to move,
    as ``2 * score - 1``), or None. Searches ask it where they need no policy; an evaluator
    that has one answers a position at a time as cheaply as in a batch, so searches do not
    gather positions into batches for it. Wrappers forward it (``ForwardingEvaluator``).
    """

    name: str
    capabilities: Capabilities
    value_only: ValueOnly | None

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]: ...

    def evaluate_actions(self, boards: Sequence[chess.Board]) -> list[dict[chess.Move, float]]:
        """Each legal move's expected score in [0, 1] for the side to move, one dict per board;
        raises ``NoActionValues`` unless ``capabilities.action_values``."""
        ...

    def cache_key(self, board: chess.Board) -> Hashable:
        """Equal keys mean equal outputs: what the network sees, not the board's identity."""
        ...


class ForwardingEvaluator:
    """Base of the wrappers (batching, memo, prefetch): forwards every member of the
    ``Evaluator`` protocol to ``inner``, so a search sees through a wrapper the evaluator it
    wraps; subclasses override ``evaluate``."""

    def __init__(self, inner: Evaluator):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @property
    def value_only(self) -> ValueOnly | None:
        return self.inner.value_only

    @property
    def trained(self) -> bool | None:
        return getattr(self.inner, "trained", None)

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        return self.inner.evaluate(boards, attention=attention, temperature=temperature)

    def evaluate_actions(self, boards: Sequence[chess.Board]) -> list[dict[chess.Move, float]]:
        return self.inner.evaluate_actions(boards)

    def cache_key(self, board: chess.Board) -> Hashable:
        return self.inner.cache_key(board)


def key_digest(key: Hashable) -> str:
    """A fixed-size (64 hex digits) database key for ``cache_key(board)`` or an encoding's position key."""
    raw = key if isinstance(key, bytes) else repr(key).encode("utf-8")
    return hashlib.sha256(raw).hexdigest()


def wdl_to_score(wdl: Sequence[float]) -> float:
    w, d, _ = wdl
    return float(w + 0.5 * d)


# ChessBench (Ruoss et al., eq. in section 2): win% = 100 / (1 + exp(-0.00368208 * cp)).
WIN_PERCENT_SLOPE = 0.00368208


def centipawns_to_score(cp: float) -> float:
    return 1.0 / (1.0 + math.exp(-WIN_PERCENT_SLOPE * cp))


def score_to_centipawns(score: float, limit: int = 10_000) -> int:
    """Inverse of the win-percentage formula, clamped to +-``limit``."""
    s = min(max(score, 1e-9), 1 - 1e-9)
    cp = -math.log(1.0 / s - 1.0) / WIN_PERCENT_SLOPE
    return int(round(max(-limit, min(limit, cp))))


def softmax_over_legal(logits: np.ndarray, moves: Sequence[chess.Move], indices: np.ndarray,
                       temperature: float = 1.0) -> dict[chess.Move, float]:
    """Softmax of ``logits[indices]`` at ``temperature``; illegal moves get nothing."""
    if len(moves) == 0:
        return {}
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    chosen = logits[indices].astype(np.float64) / temperature
    chosen -= chosen.max()
    probs = np.exp(chosen)
    probs /= probs.sum()
    return dict(zip(moves, probs.tolist()))


class MaterialEvaluator:
    """Material count squashed to an expected score; uniform policy.

    A small, trustworthy evaluator for tests, baselines and searches that need
    no network. One pawn is worth 100 centipawns on the ChessBench curve.
    """

    name = "material"
    capabilities = Capabilities(policy=False, value=True, wdl=False)

    @staticmethod
    def value_only(board: chess.Board) -> float:
        """``evaluate``'s value without the legal moves its uniform policy needs."""
        return 2.0 * centipawns_to_score(100 * material_balance(board)) - 1.0

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        out = []
        for board in boards:
            balance = material_balance(board)
            moves = list(board.legal_moves)
            policy = {m: 1.0 / len(moves) for m in moves} if moves else {}
            out.append(Evaluation(score=centipawns_to_score(100 * balance), policy=policy,
                                  extras={"material": balance}))
        return out

    def evaluate_actions(self, boards: Sequence[chess.Board]) -> list[dict[chess.Move, float]]:
        raise NoActionValues("the material count has no action values")

    @staticmethod
    def cache_key(board: chess.Board) -> Hashable:
        # Pieces, side to move, castling rights and a capturable en-passant square:
        # everything the score and the legal-move policy depend on.
        return board._transposition_key()
