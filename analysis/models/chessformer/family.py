"""The Chessformer as a registered ``ModelFamily``."""

from __future__ import annotations

from analysis.encoding import INPUT_FORMAT
from analysis.models.chessformer.config import PRESETS, ChessformerConfig
from analysis.models.chessformer.decoding import decode
from analysis.models.chessformer.losses import ChessformerLossWeights, chessformer_losses
from analysis.models.chessformer.model import FAMILY as NAME
from analysis.models.chessformer.lens import lens
from analysis.models.chessformer.model import build
from analysis.models.family import Capabilities, ModelFamily


def capabilities(config: ChessformerConfig) -> Capabilities:
    return Capabilities(policy=True, value=True, wdl=True, action_values=False,
                        attention=(config.layers, config.heads))


FAMILY = ModelFamily(
    name=NAME,
    config_type=ChessformerConfig,
    presets=PRESETS,
    encodings=(INPUT_FORMAT,),
    build=build,
    capabilities=capabilities,
    decode=decode,
    loss_weights=ChessformerLossWeights,
    losses=chessformer_losses,
    default_preset="cf-small",
    lens=lens,
)
