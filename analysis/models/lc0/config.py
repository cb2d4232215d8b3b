"""Typed configs of imported lc0 networks, bounded before any module is built.

Sizes come from the weights (as lc0 reads them); formats from the file's
normalised ``NetworkFormat``. ``input_format`` is lc0's ``InputFormat`` number,
so a checkpoint knows how its boards must be encoded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from analysis.encoding.lc0_formats import INPUT_FORMATS
from analysis.models.lc0.activations import FUNCTIONS

# Largest size of each kind a config may hold; BT4 (1024 x 15 x 32h, FFN 1536) is well inside.
LIMITS = {"blocks": 64, "channels": 1024, "encoders": 64, "embed": 4096, "heads": 128, "ffn": 16384,
          "hidden": 16384}


def _check_sizes(config, kinds: dict[str, str]) -> None:
    for name, kind in kinds.items():
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= LIMITS[kind]:
            raise ValueError(f"{name} must be an integer in 0..{LIMITS[kind]}, not {value!r}")


def _check_common(config) -> None:
    if config.input_format not in INPUT_FORMATS:
        raise ValueError(f"unknown lc0 input format {config.input_format!r}")
    for name in ("activation",):
        if getattr(config, name) not in FUNCTIONS:
            raise ValueError(f"unknown activation {getattr(config, name)!r}")


@dataclass(frozen=True)
class ResNetConfig:
    """A classical (SE-)ResNet: Maia, meangirl, the old T-series CNNs."""

    blocks: int
    channels: int
    se_channels: int = 0  # 0: residual blocks without squeeze-excitation
    policy: str = "convolution"  # or "classical" (1x1 conv + FC)
    policy_channels: int = 0  # the classical head's 1x1 conv width
    wdl: bool = True  # False: a single tanh value
    value_channels: int = 32
    value_hidden: int = 128
    moves_left_channels: int = 0  # 0: no moves-left head
    moves_left_hidden: int = 0
    activation: str = "relu"
    input_format: int = 1

    def __post_init__(self) -> None:
        _check_sizes(self, {"blocks": "blocks", "channels": "channels", "se_channels": "channels",
                            "policy_channels": "channels", "value_channels": "channels", "value_hidden": "hidden",
                            "moves_left_channels": "channels", "moves_left_hidden": "hidden"})
        _check_common(self)
        if self.channels < 1 or self.policy not in ("convolution", "classical"):
            raise ValueError(f"bad resnet config: channels {self.channels}, policy {self.policy!r}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AttentionConfig:
    """An attention-body net (T-series PE_MAP, BT-series PE_DENSE)."""

    encoders: int
    embed: int  # E: token width after the input embedding
    heads: int
    d_model: int  # width of q, k, v
    ffn: int  # encoder FFN hidden width
    embedding: str = "pe_dense"  # or "pe_map"
    dense_features: int = 0  # PE_DENSE: D extra features per square
    embedding_ffn: int = 0  # PE_DENSE: hidden width of the embedding FFN (0: none)
    gates: bool = False
    smolgen_compress: int = 0  # 0: no smolgen
    smolgen_hidden: int = 0
    smolgen_gen: int = 0
    activation: str = "mish"
    ffn_activation: str = "mish"
    smolgen_activation: str = "swish"
    policy_heads: tuple[str, ...] = ("vanilla",)
    policy_head: str = "vanilla"  # the head behind the "policy" output
    shared_policy_embedding: bool = False
    policy_embed: int = 0  # width after ip_pol
    policy_dim: int = 0  # width of the from/to keys
    policy_encoders: int = 0
    policy_encoder_heads: int = 0
    policy_encoder_ffn: int = 0
    value_heads: tuple[str, ...] = ("winner",)
    value_head: str = "winner"  # the head behind the "wdl" output
    wdl: bool = True
    value_channels: int = 32
    value_hidden: int = 128
    moves_left_channels: int = 0
    moves_left_hidden: int = 0
    input_format: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy_heads", tuple(self.policy_heads))
        object.__setattr__(self, "value_heads", tuple(self.value_heads))
        _check_sizes(self, {"encoders": "encoders", "embed": "embed", "heads": "heads", "d_model": "embed",
                            "ffn": "ffn", "dense_features": "embed", "embedding_ffn": "ffn",
                            "smolgen_compress": "embed", "smolgen_hidden": "hidden", "smolgen_gen": "hidden",
                            "policy_embed": "embed", "policy_dim": "embed", "policy_encoders": "encoders",
                            "policy_encoder_heads": "heads", "policy_encoder_ffn": "ffn",
                            "value_channels": "embed", "value_hidden": "hidden",
                            "moves_left_channels": "embed", "moves_left_hidden": "hidden"})
        _check_common(self)
        for name in ("ffn_activation", "smolgen_activation"):
            if getattr(self, name) not in FUNCTIONS:
                raise ValueError(f"unknown {name} {getattr(self, name)!r}")
        if self.embedding not in ("pe_map", "pe_dense"):
            raise ValueError(f"unknown input embedding {self.embedding!r}")
        if self.heads < 1 or self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by {self.heads} heads")
        if self.policy_encoders and (self.policy_encoder_heads < 1 or self.policy_embed % self.policy_encoder_heads):
            raise ValueError("policy encoder heads must divide the policy embedding")
        if len(self.policy_heads) > 8 or len(self.value_heads) > 8:
            raise ValueError("at most 8 policy and 8 value heads")
        if self.policy_head not in self.policy_heads or self.value_head not in self.value_heads:
            raise ValueError(f"default heads {self.policy_head!r}/{self.value_head!r} are not among "
                             f"{self.policy_heads}/{self.value_heads}")

    @property
    def eps(self) -> float:
        """LayerNorm epsilon: 1e-3 for PE_DENSE (BT) nets, 1e-6 otherwise (lc0's choice)."""
        return 1e-3 if self.embedding == "pe_dense" else 1e-6

    def to_dict(self) -> dict:
        out = asdict(self)
        out["policy_heads"], out["value_heads"] = list(self.policy_heads), list(self.value_heads)
        return out


def config_from_dict(kind: str, data: dict):
    """A config from its checkpoint JSON; unknown keys are an error, not ignored."""
    cls = {"resnet": ResNetConfig, "attention": AttentionConfig}[kind]
    known = {f.name for f in fields(cls)}
    extra = set(data) - known
    if extra:
        raise ValueError(f"unknown config keys: {', '.join(sorted(extra))}")
    return cls(**data)
