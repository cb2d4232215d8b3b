"""Lc0 networks in Sightline: read lc0's ``.pb.gz`` files and run them in PyTorch.

One module per part, as lczero-training splits its model:

==================  ==========================================================
``convert/``        lc0's ``.pb.gz`` format both ways: reading it (schema,
                    unpacking, dequantisation, import into a torch network or
                    a Sightline checkpoint) and writing a network back
``config``          ``ResNetConfig`` and ``AttentionConfig``, bounded
``activations``     every activation lc0's format can name
``policy_map``      the conv (80 x 64) and attention (4288) maps to 1858 moves
``resnet``          SE-ResNet body and its conv heads
``attention``       attention body: embeddings, gates, DeepNorm encoders, smolgen
``encoder``         the attention body's encoder layer and smolgen
``heads``           attention policy (with promotions), value, moves-left
``model``           ``build(family, config)``
``evaluate``        boards in, legal-move policy / WDL / attention (real squares) out
``decoding``        raw outputs -> ``Evaluation`` (the one evaluator's decode)
``losses``          fine-tuning losses on Sightline's data
``lens``            the lens on attention bodies; ``lens_resnet`` on SE-ResNets
``presets``         named shapes: ``maia``, ``bt-tiny``, ``bt-small``, ``bt4``
``agreement``       how far the port is from lc0's own outputs (docs/lc0.md)
``family``          the two registered families and their ``.pb.gz`` importer
==================  ==========================================================

Families: ``lc0-resnet`` and ``lc0-attention``. Every bad input raises
``analysis.errors.CheckpointError`` naming the problem.
"""

from analysis.models.lc0.convert.load import from_lc0, load_lc0
from analysis.models.lc0.convert.reader import read_net
from analysis.models.lc0.evaluate import Lc0Answer, evaluate_boards
from analysis.models.lc0.model import ATTENTION, FAMILIES, RESNET, build

__all__ = ["ATTENTION", "FAMILIES", "Lc0Answer", "RESNET", "build", "evaluate_boards", "from_lc0", "load_lc0",
           "read_net"]
