"""ChessBench as a registered ``ModelFamily``."""

from __future__ import annotations

from analysis.encoding.chessbench import NAME as ENCODING
from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, PRESETS, ChessBenchConfig
from analysis.models.chessbench.data import make_dataset
from analysis.models.chessbench.decoding import decode, decode_actions, inputs
from analysis.models.chessbench.lens import lens
from analysis.models.chessbench.losses import ChessBenchLossWeights, chessbench_losses
from analysis.models.chessbench.model import FAMILY as NAME
from analysis.models.chessbench.model import build
from analysis.models.family import Capabilities, ModelFamily


def capabilities(config: ChessBenchConfig) -> Capabilities:
    """Action values give a policy (softmax over them) and a value (the best move's); a
    state-value net has a value only; a cloning net a policy only. No net has WDL: the
    bins predict a win probability, not its draw share."""
    return Capabilities(policy=config.head != "state_value", value=config.head != BEHAVIOURAL_CLONING,
                        wdl=False, action_values=config.head == ACTION_VALUE,
                        attention=(config.layers, config.heads))


FAMILY = ModelFamily(
    name=NAME,
    config_type=ChessBenchConfig,
    presets=PRESETS,
    encodings=(ENCODING,),
    build=build,
    capabilities=capabilities,
    decode=decode,
    loss_weights=ChessBenchLossWeights,
    losses=chessbench_losses,
    default_preset="cb-small",
    decode_actions=decode_actions,
    inputs=inputs,
    dataset=make_dataset,
    lens=lens,
)
