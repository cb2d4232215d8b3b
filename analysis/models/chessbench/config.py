"""ChessBench configuration: the predictor's head, the transformer's sizes, presets and their bounds."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from analysis.encoding.chessbench import CHARACTERS, SEQUENCE_LENGTH
from analysis.encoding.chessbench_actions import NUM_ACTIONS

ACTION_VALUE, STATE_VALUE, BEHAVIOURAL_CLONING = "action_value", "state_value", "behavioural_cloning"
HEADS = (ACTION_VALUE, STATE_VALUE, BEHAVIOURAL_CLONING)

# Largest value of each size a config may hold (a checkpoint's header can claim anything;
# configs are bounded before anything is built, as Chessformer's are).
CONFIG_LIMITS: dict[str, int] = {"layers": 64, "embed": 4096, "heads": 64, "widening": 16, "bins": 1024,
                                 "vocab": 4096}


@dataclass(frozen=True)
class ChessBenchConfig:
    """``head``: what the network predicts (Ruoss et al. section 2.3). ``vocab``: token embedding
    rows, 1968 for action-value nets (action tokens share the table with FEN tokens, as in
    the reference) and 31 for the reference's state-value net."""

    head: str = ACTION_VALUE
    layers: int = 8
    embed: int = 256
    heads: int = 8
    widening: int = 4  # SwiGLU hidden size = widening * embed
    bins: int = 128  # value bins (K), uniform on [0, 1]
    vocab: int = NUM_ACTIONS

    def __post_init__(self) -> None:
        if self.head not in HEADS:
            raise ValueError(f"head must be one of {', '.join(HEADS)}, not {self.head!r}")
        for name, limit in CONFIG_LIMITS.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
            if value > limit:
                raise ValueError(f"{name} {value} is over the limit of {limit}")
        if self.embed % self.heads:
            raise ValueError(f"embed {self.embed} is not divisible by heads {self.heads}")
        least = NUM_ACTIONS if self.head == ACTION_VALUE else len(CHARACTERS)
        if self.vocab < least:
            raise ValueError(f"vocab {self.vocab} is too small: a {self.head} network reads token ids up to {least - 1}")
        if self.bins < 2:
            raise ValueError("bins must be at least 2")

    @property
    def sequence_length(self) -> int:
        """Positions the network sees: BOS + 77 FEN tokens (+ the action for action values)."""
        return 1 + SEQUENCE_LENGTH + (self.head == ACTION_VALUE)

    @property
    def outputs(self) -> int:
        return NUM_ACTIONS if self.head == BEHAVIOURAL_CLONING else self.bins

    @property
    def head_dim(self) -> int:
        return self.embed // self.heads

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, ChessBenchConfig] = {
    # For tests: seconds to build and run.
    "cb-tiny": ChessBenchConfig(layers=2, embed=32, heads=4, bins=32),
    # CPU-trainable action-value nets. An action-value net reads one 78-token row per legal move,
    # so a position costs about 30 forward passes: on two CPU cores only the smallest sizes see
    # a useful share of a dataset in an hour. cb-mini is the reference's local config
    # (train.py: 4 layers, D 64, 4 heads); cb-small is the next size up.
    "cb-mini": ChessBenchConfig(layers=4, embed=64, heads=4),
    "cb-small": ChessBenchConfig(layers=4, embed=128, heads=4),
    # The GPU-trained net this project ships: the 9M's depth and heads at half its width, so the
    # file stays a few MB.
    "cb-2m": ChessBenchConfig(layers=8, embed=128, heads=8),
    # The paper's three (appendix A.2), with the reference's exact parameter counts.
    "cb-9m": ChessBenchConfig(layers=8, embed=256, heads=8),
    "cb-136m": ChessBenchConfig(layers=8, embed=1024, heads=8),
    "cb-270m": ChessBenchConfig(layers=16, embed=1024, heads=8),
    # The other two predictors at 9M (the reference's 9M_state_value reads 31 token ids).
    "cb-9m-sv": ChessBenchConfig(head=STATE_VALUE, layers=8, embed=256, heads=8, vocab=len(CHARACTERS)),
    "cb-9m-bc": ChessBenchConfig(head=BEHAVIOURAL_CLONING, layers=8, embed=256, heads=8, vocab=len(CHARACTERS)),
}
