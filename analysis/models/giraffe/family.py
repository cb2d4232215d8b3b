"""Giraffe as a registered ``ModelFamily``: value and the move evaluator's policy; no attention;
the probability-limited search by default, and the quiescence value shown as a position's value."""

from __future__ import annotations

from analysis.encoding.giraffe import NAME as ENCODING
from analysis.models.family import Capabilities, ModelFamily
from analysis.models.giraffe.about import ABOUT
from analysis.models.giraffe.config import PRESETS, GiraffeConfig
from analysis.models.giraffe.decoding import decode
from analysis.models.giraffe.lens import GiraffeLens
from analysis.models.giraffe.losses import GiraffeLossWeights, giraffe_losses
from analysis.models.giraffe.model import FAMILY as NAME
from analysis.models.giraffe.model import build


def compiled_kernel(model, name: str):
    from analysis.models.giraffe.compiled import CompiledGiraffe  # numba compiles on first use

    return CompiledGiraffe(model, name)


def capabilities(config: GiraffeConfig) -> Capabilities:
    # A plain MLP: no attention maps to show. No WDL: the tanh output is one expected outcome.
    return Capabilities(policy=True, value=True, wdl=False, action_values=False, attention=None)


FAMILY = ModelFamily(
    name=NAME,
    config_type=GiraffeConfig,
    presets=PRESETS,
    encodings=(ENCODING,),
    build=build,
    capabilities=capabilities,
    decode=decode,
    loss_weights=GiraffeLossWeights,
    losses=giraffe_losses,
    default_preset="giraffe-2015",
    cpu_kernel=compiled_kernel,
    lens=GiraffeLens,
    about=ABOUT,  # the probability-limited search by default; the quiescence value shown; no attention
)
