"""Chessformer configuration: sizes, the position representation, presets and their bounds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Literal

PositionKind = Literal["absolute", "relative_bias", "shaw"]


# Largest value of each size a config may hold (cf-240m, the largest preset, has 15 / 1024 /
# 32 / 4096 / 32 / 128 / 32 / 512). A checkpoint's header can claim any size, and even the
# meta-device skeleton that loading builds first takes time linear in the layer count (a
# 444-byte file claiming 1,000 layers held up an admin request while it was built), so configs are
# bounded when they are made, before anything is built.
CONFIG_LIMITS: dict[str, int] = {
    "layers": 64, "embed": 4096, "heads": 64, "ffn": 16384,
    "value_channels": 256, "value_embed": 1024, "reward_buckets": 512, "input_dense": 4096,
}


@dataclass(frozen=True)
class ChessformerConfig:
    layers: int = 8
    embed: int = 256
    heads: int = 8
    ffn: int = 256
    position: PositionKind = "shaw"
    value_channels: int = 32  # d_value of Appendix A-C
    value_embed: int = 128
    reward_buckets: int = 32  # categorical reward distribution of the q / short-term heads
    # Lc0's BT3+ "dense" input preprocessing (INPUT_EMBEDDING_PE_DENSE): the current
    # position's 12 piece planes, flattened over all squares, are projected to
    # ``input_dense`` extra features per token. Appendix A-A describes only the linear
    # projection; the paper's 243M parameter count for CF-240M is only reached with this
    # block (as in the authors' BT4 nets), so cf-240m enables it. 0 turns it off.
    input_dense: int = 0

    def __post_init__(self) -> None:
        for name in ("layers", "embed", "heads", "ffn", "value_channels", "value_embed", "reward_buckets"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if not isinstance(self.input_dense, int) or isinstance(self.input_dense, bool) or self.input_dense < 0:
            raise ValueError(f"input_dense must be a non-negative integer, not {self.input_dense!r}")
        for name, limit in CONFIG_LIMITS.items():
            if getattr(self, name) > limit:
                raise ValueError(f"{name} {getattr(self, name)} is over the limit of {limit}")
        if self.embed % self.heads:
            raise ValueError(f"embed {self.embed} is not divisible by heads {self.heads}")
        if self.position not in ("absolute", "relative_bias", "shaw"):
            raise ValueError(f"unknown position representation {self.position!r}")

    @property
    def head_dim(self) -> int:
        return self.embed // self.heads

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, ChessformerConfig] = {
    "cf-tiny": ChessformerConfig(layers=2, embed=32, heads=4, ffn=32, value_channels=4, value_embed=16,
                                 reward_buckets=8),
    "cf-small": ChessformerConfig(layers=6, embed=128, heads=8, ffn=256, value_channels=16, value_embed=64),
    "cf-6m": ChessformerConfig(layers=8, embed=256, heads=8, ffn=256),
    "cf-240m": ChessformerConfig(layers=15, embed=1024, heads=32, ffn=4096, input_dense=512),
}



def preset(name: str, **overrides) -> ChessformerConfig:
    try:
        return replace(PRESETS[name], **overrides)
    except KeyError:
        raise ValueError(f"unknown chessformer preset {name!r}; choose from {', '.join(PRESETS)}") from None
