"""Giraffe network sizes: the evaluator and the move evaluator, with the paper's grouped first layers."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# Bound every width before anything is built: a checkpoint header can claim any size.
MAX_WIDTH = 4096


@dataclass(frozen=True)
class GiraffeConfig:
    """First-layer units per feature group, then the one fully connected hidden layer.

    Defaults are the reference code's release sizes (053b736): the evaluator's first layer
    has one unit per global feature and ceil(5%) of the piece / square features, then 64;
    the move evaluator's 22 + 13 + 18, then 64. The paper gives no widths.
    """

    global_units: int = 15
    piece_units: int = 11
    square_units: int = 7
    hidden: int = 64
    move_global_units: int = 22  # global and move features (the move's own group)
    move_piece_units: int = 13
    move_square_units: int = 18
    move_hidden: int = 64

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_WIDTH:
                raise ValueError(f"{name} must be an integer in 1..{MAX_WIDTH}, not {value!r}")

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, GiraffeConfig] = {
    "giraffe-2015": GiraffeConfig(),
    # Wider first groups, for runs that have the CPU time for them.
    "giraffe-wide": GiraffeConfig(global_units=32, piece_units=96, square_units=64, hidden=128,
                                  move_global_units=48, move_piece_units=48, move_square_units=32, move_hidden=64),
}
