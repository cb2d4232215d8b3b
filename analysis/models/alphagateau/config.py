"""AlphaGateau configuration: width, depth, the board it plays, and presets."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# Bounds checked when a config is made (a checkpoint header can claim any size).
CONFIG_LIMITS: dict[str, int] = {"blocks": 64, "width": 2048}
BOARDS = (8, 5)


@dataclass(frozen=True)
class AlphaGateauConfig:
    """``blocks`` ResGATEAU blocks (2 GATEAU layers each) at feature width ``width``.

    ``board`` is the board the network plays and is trained on (8, or 5 for
    Gardner chess); nothing in the network depends on it, so a 5x5 network's
    weights load unchanged into the same config with ``board=8`` (the paper's
    fine-tuning). ``leaky_slope``: the paper does not give the attention
    logits' LeakyReLU slope; the public code uses flax's default, 0.01.
    """

    blocks: int = 5
    width: int = 128
    board: int = 8
    leaky_slope: float = 0.01

    def __post_init__(self) -> None:
        for name, limit in CONFIG_LIMITS.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= limit:
                raise ValueError(f"{name} must be an integer in 1..{limit}, not {value!r}")
        if self.board not in BOARDS:
            raise ValueError(f"board must be one of {BOARDS} (8x8 chess, 5x5 Gardner chess), not {self.board!r}")
        if not isinstance(self.leaky_slope, (int, float)) or not 0 <= self.leaky_slope < 1:
            raise ValueError(f"leaky_slope must be in [0, 1), not {self.leaky_slope!r}")

    @property
    def gateau_layers(self) -> int:
        return 2 * self.blocks

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, AlphaGateauConfig] = {
    "ag-tiny": AlphaGateauConfig(blocks=1, width=16),  # tests
    "ag-small": AlphaGateauConfig(blocks=3, width=64),  # CPU-trainable
    "ag-small-gardner": AlphaGateauConfig(blocks=3, width=64, board=5),
    "ag-5": AlphaGateauConfig(blocks=5, width=128),  # the paper's learning-speed model
    "ag-10": AlphaGateauConfig(blocks=10, width=128),  # the paper's fine-tuned model, on 8x8
    "ag-10-gardner": AlphaGateauConfig(blocks=10, width=128, board=5),  # ... and on 5x5
}
