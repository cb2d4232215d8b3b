"""What a model family is to the rest of Sightline: ``ModelFamily`` and ``Capabilities``.

Everything outside a family's package (checkpoints, the evaluator, training,
the workers and the site) goes through these, so adding a family is one
package plus one line in ``analysis.models.FAMILIES``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import chess
import numpy as np
import torch
from torch import nn

from analysis.models.about import PLAIN, FamilyAbout
from analysis.evaluator import Capabilities, Evaluation

__all__ = ["Capabilities", "Importer", "ModelFamily", "logits_softmax"]


# decode(raw outputs as float32 numpy, boards, encoding, temperature=, attention=, name=) -> Evaluations
Decoder = Callable[..., list[Evaluation]]
# decode_actions(raw outputs, boards, encoding, name=) -> each legal move's expected score for the mover
ActionDecoder = Callable[..., list[dict[chess.Move, float]]]


@dataclass(frozen=True)
class Importer:
    """Reads another program's network files (by file-name ending) as this family's networks.

    ``load(path)`` -> (model, CheckpointMeta), converted in memory; ``convert(path, out,
    float16=)`` writes an ordinary checkpoint. Both raise ``CheckpointError`` with the reason.
    ``name`` is the CLI's ``import-NAME``.
    """

    name: str
    suffixes: Sequence[str]
    load: Callable[..., Any]
    convert: Callable[..., Any]

    def reads(self, path: Any) -> bool:
        return str(path).lower().endswith(tuple(self.suffixes))


@dataclass(frozen=True)
class ModelFamily:
    """A registered model family.

    ``encodings``: the input encodings its networks accept (the first is used
    for new networks). Every network is called as ``model(inputs,
    need_attention=...)`` and returns a dict of tensors; ``decode`` turns those
    (as float32 numpy) into Evaluations with attention in real squares.
    ``losses(outputs, batch, weights)`` returns
    every training term plus ``total``; ``loss_weights`` is its weights type.
    """

    name: str
    config_type: type
    presets: Mapping[str, Any]
    encodings: Sequence[str]
    build: Callable[[Any], nn.Module]
    capabilities: Callable[[Any], Capabilities]
    decode: Decoder
    loss_weights: type
    losses: Callable[[dict[str, torch.Tensor], dict[str, torch.Tensor], Any], dict[str, torch.Tensor]]
    default_preset: str  # what an untrained stand-in is made of
    decode_actions: ActionDecoder | None = None
    # The one encoding a config's network takes, when the config fixes it (else any of ``encodings``).
    encoding_for: Callable[[Any], str] | None = None
    importer: Importer | None = None
    # The network's input rows for boards (default: ``encoding.encode(boards)``), for a family whose
    # network reads more than the board: inputs(boards, encoding, config) -> array.
    inputs: Callable[..., np.ndarray] | None = None
    # Its training data (default: the lc0-plane ``PositionDataset``): dataset(roots, split, config,
    # max_rows=, policy_temperature=, fen_only_share=, colour_flip_share=, seed=) -> a torch Dataset
    # indexed by arrays of sample numbers, each item a batch dict; a family uses the run settings that
    # apply to it (the shares are 0 for the test split).
    dataset: Callable[..., Any] | None = None
    # Config fields that change no weight (AlphaGateau's board): a checkpoint whose config differs from
    # a run's only in these initialises it (``init_from``, the paper's 5x5 -> 8x8 fine-tuning).
    weightless_fields: Sequence[str] = ()
    # More provenance for a trained export: training_provenance(config, init_from provenance or None) -> dict.
    training_provenance: Callable[[Any, dict | None], dict] | None = None
    # A compiled path for CPU inference one position at a time, where torch's per-call overhead
    # would dominate (small networks inside a search): cpu_kernel(model, name) -> an object with
    # ``evaluate(boards, temperature=)`` (what decode gives) and ``value(board)`` (the value in
    # [-1, 1] for the side to move, without the policy).
    cpu_kernel: Callable[..., Any] | None = None
    # The lens (``analysis.lens``): lens(model, encoding) -> its ``analysis.models.lens.LensAdapter``, built by
    # the family's own ``lens`` module; None with ``no_lens_reason`` saying why it cannot be taken apart.
    lens: Callable[[nn.Module, Any], Any] | None = None
    no_lens_reason: str = ""
    # What the site says of its networks without loading them (its default search, shown value, why no
    # attention maps, lc0's search): the torch-free object ``analysis.models.get_about`` also finds, so
    # callers read ``family.about.default_search`` and the like.
    about: FamilyAbout = PLAIN

    def weights_config(self, config: Any) -> Any:
        """``config`` without its ``weightless_fields``: equal for interchangeable weights."""
        if not self.weightless_fields:
            return config
        return {k: v for k, v in asdict(config).items() if k not in self.weightless_fields}

    def network_inputs(self, boards: Sequence[chess.Board], encoding: Any, config: Any) -> np.ndarray:
        return encoding.encode(boards) if self.inputs is None else self.inputs(boards, encoding, config)

    def config(self, config: Mapping[str, Any] | Any) -> Any:
        """The typed config from a checkpoint's JSON (ValueError when it does not fit)."""
        if isinstance(config, self.config_type):
            return config
        if not isinstance(config, Mapping):
            raise ValueError(f"a {self.name} config must be a JSON object")
        try:
            return self.config_type(**config)
        except TypeError as exc:  # unknown or missing fields
            raise ValueError(str(exc)) from None

    def preset(self, name: str, **overrides) -> Any:
        try:
            return replace(self.presets[name], **overrides)
        except KeyError:
            raise ValueError(f"unknown {self.name} preset {name!r}; choose from {', '.join(self.presets)}") from None

    def preset_name(self, config: Mapping[str, Any]) -> str:
        """The preset ``config`` equals, else "custom"."""
        for name, preset in self.presets.items():
            if asdict(preset) == dict(config):
                return name
        return "custom"

    def check_encoding(self, encoding: str, config: Any = None) -> None:
        """ValueError unless ``encoding`` is one this family (and ``config``, when given) takes."""
        if encoding not in self.encodings:
            raise ValueError(f"input encoding {encoding!r} is not one {self.name} accepts "
                             f"({', '.join(self.encodings)})")
        if config is not None and self.encoding_for is not None and encoding != self.encoding_for(config):
            raise ValueError(f"input encoding {encoding!r} does not match the config, which needs "
                             f"{self.encoding_for(config)!r}")

    def encoding_of(self, config: Any) -> str:
        """The encoding a new network of ``config`` is saved with."""
        return self.encoding_for(config) if self.encoding_for is not None else self.encodings[0]


def logits_softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of float32 logits (numpy), as the evaluator has always done it."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)
