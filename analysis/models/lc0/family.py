"""Imported lc0 networks as two registered families: ``lc0-resnet`` (classical SE-ResNets:
Maia, meangirl) and ``lc0-attention`` (T-series and BT-series attention bodies).

Both read lc0's ``.pb.gz`` directly (the importer, converted in memory) or as a
converted checkpoint; each network takes the encoding of its lc0 input format.
"""

from __future__ import annotations


from analysis.models.family import Capabilities, Importer, ModelFamily
from analysis.models.lc0.about import ATTENTION_ABOUT, RESNET_ABOUT
from analysis.models.lc0.config import AttentionConfig, ResNetConfig
from analysis.models.lc0.convert import convert, import_net
from analysis.models.lc0.decoding import decode
from analysis.encoding.lc0_formats import BY_INPUT_FORMAT
from analysis.models.lc0.lens import AttentionLens
from analysis.models.lc0.lens_resnet import ResNetLens
from analysis.models.lc0.losses import Lc0LossWeights, lc0_losses
from analysis.models.lc0.model import ATTENTION, RESNET
from analysis.models.lc0.presets import ATTENTION_PRESETS, RESNET_PRESETS
from analysis.models.lc0.resnet import Lc0ResNet
from analysis.models.lc0.attention import Lc0Attention

IMPORTER = Importer(name="lc0", suffixes=(".pb.gz", ".pb"), load=import_net, convert=convert)


ENCODING_NAMES = tuple(e.name for e in BY_INPUT_FORMAT.values())


def encoding_for(config: ResNetConfig | AttentionConfig) -> str:
    """The one encoding a network of ``config`` takes (its lc0 input format)."""
    return BY_INPUT_FORMAT[config.input_format].name


def capabilities(config: ResNetConfig | AttentionConfig) -> Capabilities:
    attention = (config.encoders, config.heads) if isinstance(config, AttentionConfig) else None
    return Capabilities(policy=True, value=True, wdl=config.wdl, action_values=False, attention=attention)


def _family(name: str, config_type: type, build, presets: dict, default: str, **more) -> ModelFamily:
    return ModelFamily(
        name=name, config_type=config_type, presets=presets, encodings=ENCODING_NAMES, build=build,
        capabilities=capabilities, decode=decode, loss_weights=Lc0LossWeights, losses=lc0_losses,
        default_preset=default, encoding_for=encoding_for, importer=IMPORTER, **more)


RESNET_FAMILY = _family(RESNET, ResNetConfig, Lc0ResNet, RESNET_PRESETS, "maia", lens=ResNetLens, about=RESNET_ABOUT)
ATTENTION_FAMILY = _family(ATTENTION, AttentionConfig, Lc0Attention, ATTENTION_PRESETS, "bt-tiny", lens=AttentionLens,
                           about=ATTENTION_ABOUT)
