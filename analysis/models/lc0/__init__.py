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
``about``           what the site says of their networks, without torch
==================  ==========================================================

Families: ``lc0-resnet`` and ``lc0-attention``. Every bad input raises
``analysis.errors.CheckpointError`` naming the problem.
"""

from __future__ import annotations

import importlib

# The package's public names, imported on first use (PEP 562): ``about`` (what the site shows of these
# networks) is read by the web process, which must not load torch through this package.
_EXPORTS = {
    "from_lc0": "analysis.models.lc0.convert.load", "load_lc0": "analysis.models.lc0.convert.load",
    "read_net": "analysis.models.lc0.convert.reader",
    "Lc0Answer": "analysis.models.lc0.evaluate", "evaluate_boards": "analysis.models.lc0.evaluate",
    "ATTENTION": "analysis.models.lc0.model", "FAMILIES": "analysis.models.lc0.model",
    "RESNET": "analysis.models.lc0.model", "build": "analysis.models.lc0.model",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
