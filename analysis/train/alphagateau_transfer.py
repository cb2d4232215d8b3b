"""A network trained on one board, saved to play another (the paper's 5x5 -> 8x8 transfer).

No weight depends on the board, so this copies the weights into the same
config with another ``board`` and a file whose encoding is that board's. The
provenance keeps the boards it was *trained* on, so a Gardner network on 8x8
still says it never saw an 8x8 position.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analysis.checkpoint import load_checkpoint, save_checkpoint
from analysis.models.alphagateau.model import FAMILY, build


def on_board(path: str | Path, board: int, out: str | Path) -> Path:
    """Save the AlphaGateau checkpoint ``path`` as a network for ``board`` (8 or 5) at ``out``."""
    source, meta = load_checkpoint(path, family=FAMILY)
    model = build(replace(source.config, board=board))
    model.load_state_dict(source.state_dict())
    provenance = dict(meta.provenance or {})
    provenance.setdefault("board_sizes", [source.config.board])
    provenance["moved_to_board"] = {"from": str(path), "board": board}
    return save_checkpoint(out, model, trained=meta.trained, provenance=provenance, metrics={})
