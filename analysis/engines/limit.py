"""How long Stockfish thinks per position when it labels data: a validated ``chess.engine.Limit``."""

from __future__ import annotations

from dataclasses import dataclass

import chess.engine


@dataclass(frozen=True)
class EngineLimit:
    """How long Stockfish thinks per position; at least one field must be set."""

    depth: int | None = None
    nodes: int | None = None
    time: float | None = None

    def __post_init__(self) -> None:
        if self.depth is None and self.nodes is None and self.time is None:
            raise ValueError("set at least one of depth, nodes, time")
        for name in ("depth", "nodes", "time"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")

    def limit(self) -> chess.engine.Limit:
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes, time=self.time)

    def describe(self) -> dict:
        return {k: v for k, v in (("depth", self.depth), ("nodes", self.nodes), ("time", self.time)) if v is not None}
