"""Model specs, read in one place: a checkpoint path, ``material``, ``material-greedy`` or
``stockfish[:elo=N][,movetime=S][,nodes=N][,depth=N]``.

``resolve_evaluator`` gives what evaluates positions (a checkpoint or the material
count); ``resolve_agent`` gives what chooses moves (any spec, a checkpoint as
``PATH:ALGO[:NODES]`` or with ``algo``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MATERIAL = "material"
MATERIAL_GREEDY = "material-greedy"
_GREEDY_NAMES = (MATERIAL_GREEDY, "greedy")
SpecKind = Literal["checkpoint", "material", "material-greedy", "stockfish"]


@dataclass(frozen=True)
class ModelSpec:
    kind: SpecKind
    text: str  # as given; for a checkpoint, its path

    @property
    def builtin(self) -> bool:
        """True for anything but a checkpoint: no file to find."""
        return self.kind != "checkpoint"


def parse_spec(spec: str) -> ModelSpec:
    if spec == MATERIAL:
        return ModelSpec("material", spec)
    if spec in _GREEDY_NAMES:
        return ModelSpec("material-greedy", spec)
    if spec == "stockfish" or spec.startswith("stockfish:"):
        return ModelSpec("stockfish", spec)
    return ModelSpec("checkpoint", spec)


def resolve_evaluator(spec: str, device: str | None = None, *, name: str | None = None):
    """The Evaluator for ``spec``. A missing file is ``FileNotFoundError``; a bad one
    ``CheckpointError``; an agent-only spec (material-greedy, stockfish) ``ValueError``."""
    parsed = parse_spec(spec)
    if parsed.kind == "material":
        from analysis.evaluator import MaterialEvaluator

        return MaterialEvaluator()
    if parsed.kind != "checkpoint":
        raise ValueError(f"{spec} chooses moves but evaluates no positions: use a checkpoint or {MATERIAL}")
    if not Path(spec).is_file():
        raise FileNotFoundError(f"model checkpoint not found: {spec}")
    from analysis.checkpoint import load_evaluator

    return load_evaluator(spec, device=device, name=name)


def resolve_agent(spec: str, *, algo: str | None = None, nodes: int | None = None, device: str | None = None,
                  seed: int = 0, movetime_ms: int | None = None):
    """An agent (see ``analysis.eval.agents``). ``material-greedy``, and ``material`` without a
    search, play as the 1-ply material-greedy baseline; ``material`` with ``algo`` runs that search
    on the material evaluator; a checkpoint needs a search, from ``algo`` or ``PATH:ALGO[:NODES]``.
    ``movetime_ms`` limits each search's time as well as (or instead of) its nodes."""
    from analysis.eval import agents

    parsed = parse_spec(spec)
    if parsed.kind == "material-greedy" or (parsed.kind == "material" and algo is None):
        return agents.MaterialGreedyAgent(seed)
    if parsed.kind == "stockfish":
        return agents.StockfishAgent(agents.parse_stockfish_spec(spec))
    path, algo, nodes = _search_parts(spec, algo, nodes)
    return agents.SearchAgent(resolve_evaluator(path, device), algo, nodes, movetime_ms=movetime_ms)


def _search_parts(spec: str, algo: str | None, nodes: int | None) -> tuple[str, str, int | None]:
    """(path, algo, nodes) from ``spec`` and the separate arguments."""
    if algo is not None:
        return spec, algo, nodes
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise ValueError(f"bad agent spec {spec!r}: use MODEL:ALGO[:NODES], {MATERIAL_GREEDY} or stockfish:elo=N")
    if len(parts) == 3:
        try:
            nodes = int(parts[2])
        except ValueError:
            raise ValueError(f"bad node count in {spec!r}") from None
    return parts[0], parts[1], nodes
