"""Lc0 networks in Sightline: read lc0's ``.pb.gz`` files and run them in PyTorch.

One module per part, as lczero-training splits its model:

==================  ==========================================================
``proto``           the ``pblczero.Net`` schema (built in Python, no protoc)
``reader``          gzip + protobuf, header checks, old-format normalisation
``weights``         exact dequantisation of LINEAR16 / FLOAT16 / BFLOAT16 / FLOAT32
``tensors``         named, shape-checked tensors; batch-norm folding
``config``          ``ResNetConfig`` and ``AttentionConfig``, bounded
``activations``     every activation lc0's format can name
``policy_map``      the conv (80 x 64) and attention (4288) maps to 1858 moves
``resnet``          SE-ResNet body and its conv heads
``attention``       attention body: embeddings, gates, DeepNorm encoders, smolgen
``heads``           attention policy (with promotions), value, moves-left
``import_resnet``   proto -> ResNetConfig + state dict
``import_attention``  proto -> AttentionConfig + state dict
``model``           ``build(family, config)``, ``load_lc0(path)``
``evaluate``        boards in, legal-move policy / WDL / attention (real squares) out
``convert``         ``.pb.gz`` -> Sightline checkpoint (in memory or a file)
``decoding``        raw outputs -> ``Evaluation`` (the one evaluator's decode)
``losses``          fine-tuning losses on Sightline's data
``presets``         named shapes: ``maia``, ``bt-tiny``, ``bt-small``, ``bt4``
``family``          the two registered families and their ``.pb.gz`` importer
==================  ==========================================================

Families: ``lc0-resnet`` and ``lc0-attention``. Every bad input raises
``analysis.errors.CheckpointError`` naming the problem.
"""

from analysis.models.lc0.convert import convert
from analysis.models.lc0.evaluate import Lc0Answer, evaluate_boards
from analysis.models.lc0.model import ATTENTION, FAMILIES, RESNET, build, from_lc0, load_lc0
from analysis.models.lc0.reader import read_net

__all__ = ["ATTENTION", "FAMILIES", "Lc0Answer", "RESNET", "build", "convert", "evaluate_boards", "from_lc0",
           "load_lc0", "read_net"]
