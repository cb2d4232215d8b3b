"""AlphaGateau as a registered ``ModelFamily``.

Attention: each GATEAU layer's single head is a softmax over the edges coming
into a square, so a map row (query = the receiving square) spreads 1 over the
squares that can move to it on some edge; the squares with no such edge are 0
by construction, not by the network's choice.
"""

from __future__ import annotations

from analysis.encoding.graph import GRAPH_ENCODINGS
from analysis.models.alphagateau.config import PRESETS, AlphaGateauConfig
from analysis.models.alphagateau.data import make_dataset
from analysis.models.alphagateau.decoding import decode
from analysis.models.alphagateau.lens import AlphaGateauLens
from analysis.models.alphagateau.losses import AlphaGateauLossWeights, alphagateau_losses
from analysis.models.alphagateau.model import FAMILY as NAME
from analysis.models.alphagateau.model import build
from analysis.models.family import Capabilities, ModelFamily


def capabilities(config: AlphaGateauConfig) -> Capabilities:
    return Capabilities(policy=True, value=True, wdl=False, action_values=False,
                        attention=(config.gateau_layers, 1), attention_support="moves")


def training_provenance(config: AlphaGateauConfig, init_from: dict | None) -> dict:
    """The boards a supervised run's network was trained on: its own and its source's (a Gardner
    self-play network fine-tuned on 8x8 says [5, 8])."""
    boards = {config.board}
    if init_from is not None:
        boards |= set(init_from.get("board_sizes") or [init_from["config"]["board"]])
    return {"board_sizes": sorted(boards)}


def encoding_for(config: AlphaGateauConfig) -> str:
    return GRAPH_ENCODINGS[config.board].name


FAMILY = ModelFamily(
    name=NAME,
    config_type=AlphaGateauConfig,
    presets=PRESETS,
    encodings=tuple(encoding.name for encoding in GRAPH_ENCODINGS.values()),
    build=build,
    capabilities=capabilities,
    decode=decode,
    loss_weights=AlphaGateauLossWeights,
    losses=alphagateau_losses,
    default_preset="ag-small",
    encoding_for=encoding_for,
    dataset=make_dataset,
    weightless_fields=("board",),  # no weight depends on the board (config.AlphaGateauConfig)
    training_provenance=training_provenance,
    lens=AlphaGateauLens,
)
