"""What a family's network offers the lens (``analysis.lens``): the ``LensAdapter`` interface.

A family that can be taken apart gives ``ModelFamily.lens`` a function ``lens(model, encoding)
-> LensAdapter`` (``encoding``: the network's ``Encoding``); its adapter lives in its own package
(``analysis.models.<family>.lens``) and nothing outside that package names it. The lens layer (logit lens, ablation and steering,
causal grids, attribution) is written against this interface alone.

It lives here, beside ``family.py``, and not in ``analysis.lens``, so that the families never
import the lens layer (the lens imports the families, one way).

Vocabulary:

- **readout point**: a place in the residual stream, named in forward order (``embed``, then
  finer points per block, e.g. ``0.attn`` and ``0.mlp``). The last one is what the network's
  heads read, so reading it out gives the network's own output.
- **unit kind**: a family of units whose exact write to the stream can be scaled:
  ``head`` (attention heads: (A_h V_h) W_O^(h)), ``mlp`` (MLP hidden units: h_n W_2[:, n]).
  Each kind is ``layers x per_layer`` units, counted from 0 in forward order.
- **scales**: ``{kind: tensor (V, layers, per_layer)}`` multiplies every unit's write in each of
  V variants of one position (0 removes it, 1 is clean, 2 doubles, -1 flips). Variants run as
  one batch, so a whole causal grid is one forward pass; the scales may require grad, which is
  how attribution patching gets d(output)/d(scale) of every unit from one backward pass.
- **capabilities**: ``policy``, ``value``, ``wdl``, ``head``, ``mlp``, ``split``, ``timeline`` (and
  any a family adds); ``unavailable[name]`` is the sentence that says why a network lacks one.
- **timeline**: ``capture_hooks`` reads every readout point while the network runs its *own*
  forward (the evaluator's batched pass), so the decision timeline (``analysis.lens.timeline``)
  costs no forward pass of its own; ``move_logits`` reads one point of many positions at once,
  and a family may compute only the legal moves' logits there.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import chess
import torch

__all__ = ["CAPABILITIES", "LensAdapter", "Prepared", "ReadOut", "UnitKind", "hooks", "scale_units"]

# The capabilities the lens layer asks about; a family may declare more.
CAPABILITIES = ("policy", "value", "wdl", "head", "mlp", "split", "timeline")


def scale_units(x: torch.Tensor, scale: torch.Tensor, group: int = 1) -> torch.Tensor:
    """``x`` (N, ..., U * group) with unit u's ``group`` channels times ``scale[:, u]`` ((N, U));
    the product a hook applies to a head's slice of the concatenated heads (group = head depth)
    or to an MLP's hidden units (group = 1)."""
    s = scale.repeat_interleave(group, dim=-1) if group > 1 else scale
    return x * s.reshape(s.shape[0], *([1] * (x.dim() - 2)), s.shape[-1]).to(x.dtype)


@contextmanager
def hooks(*handles_or_none):
    """Remove the given hook handles on leaving (None entries are skipped)."""
    handles = [h for h in handles_or_none if h is not None]
    try:
        yield handles
    finally:
        for handle in handles:
            handle.remove()


@dataclass(frozen=True)
class UnitKind:
    """``layers`` x ``per_layer`` units whose write can be scaled; ``what`` names one in a sentence."""

    name: str
    layers: int
    per_layer: int
    what: str


@dataclass
class Prepared:
    """One position made ready for the network: its legal moves (real squares, never mirrored)
    and whatever the adapter needs to run it (``inputs``: the network's rows for it)."""

    board: chess.Board
    moves: list[chess.Move]
    inputs: Any
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReadOut:
    """A residual read out through the network's heads, for V variants of one position.

    ``logits``: (V, moves) the raw policy logit of each legal move, in ``Prepared.moves`` order
    (None without a policy); ``score``: (V,) expected score for the side to move (None without
    a value); ``wdl``: (V, 3) win/draw/loss for the side to move (None without WDL).
    """

    logits: torch.Tensor | None
    score: torch.Tensor | None
    wdl: torch.Tensor | None = None


class LensAdapter(ABC):
    """One network seen by the lens. Subclasses set ``family``, ``readouts``, ``units`` and
    ``unavailable`` (capability -> why not) in ``__init__`` and implement the four methods."""

    family: str
    readouts: Sequence[str]
    units: Mapping[str, UnitKind]
    unavailable: Mapping[str, str]
    # One sentence for the docs and the page: what the lens does around the family's norms.
    norm_note: str = ""

    def __init__(self, model: torch.nn.Module, encoding: Any):
        self.model = model
        self.encoding = encoding  # the network's ``analysis.encoding.Encoding``

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def has(self, capability: str) -> bool:
        return self.why_not(capability) is None

    def why_not(self, capability: str) -> str | None:
        """None when the network has ``capability``, else the sentence that says why not."""
        if capability in self.unavailable:
            return self.unavailable[capability]
        if capability in ("head", "mlp") and capability not in self.units:
            return f"a {self.family} network has no {capability} units"
        if capability == "split" and type(self).attention_split is LensAdapter.attention_split:
            return f"the {self.family} lens does not take its attention logits apart"
        if capability == "timeline":
            if type(self).capture_hooks is LensAdapter.capture_hooks:
                return (f"the {self.family} lens reads its readout points in a forward pass of its own, "
                        "so the evaluation's pass cannot give them")
            return self.why_not("policy")
        if capability not in CAPABILITIES and capability not in self.units:
            return f"unknown capability {capability!r}"
        return None

    @abstractmethod
    def prepare(self, board: chess.Board) -> Prepared:
        """The position's inputs and legal moves (a position without legal moves is the caller's error)."""

    @abstractmethod
    def run(self, prepared: Prepared, variants: int = 1, scales: Mapping[str, torch.Tensor] | None = None,
            capture: bool = False) -> tuple[list[torch.Tensor] | None, ReadOut]:
        """One forward pass of ``variants`` copies of the position with each unit's write scaled by
        ``scales`` (absent kinds are clean). Returns the residual at every readout point when
        ``capture`` (one tensor per point, V variants stacked first) and the network's own output.
        Differentiable in ``scales`` when grad is enabled."""

    @abstractmethod
    def unembed(self, prepared: Prepared, residual: torch.Tensor, readout: str | None) -> ReadOut:
        """A captured residual (V variants of ``readout``) read out through the policy and value
        heads exactly as the network reads its last one. ``readout`` None: the V entries are
        several readout points stacked (the logit lens reads them all in one call)."""

    @abstractmethod
    def head_writes(self, prepared: Prepared, layer: int) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """Layer ``layer``'s attention taken apart on a clean pass: (per-head writes (H, *rows),
        the output bias or None, the attention output (*rows)), so that the writes plus the
        bias sum to the output (the exactness test)."""

    def activations(self, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
        """(B, S, per_layer): every ``kind`` unit of ``layer`` on each of B positions (one batch), per
        real square (S = 64, a1 = 0), or S = 1 where the units have no squares (the neurons panel).
        A family whose units have nothing to read raises ValueError saying why."""
        raise ValueError(f"a {self.family} network's {kind} units have no activations to read")

    def attention_split(self, prepared: Prepared, layer: int) -> dict[str, torch.Tensor]:
        """Layer ``layer``'s attention taken apart, (H, 64, 64) by real squares (a1 = 0, query row
        first): "content" softmax(QK^T / sqrt(D)) alone, "position" the position term added to those
        logits (smolgen's bias, Shaw's RPE terms), "final" the network's own map (capability "split")."""
        raise ValueError(self.why_not("split") or f"the {self.family} lens cannot split its attention")

    def capture_hooks(self, store: list) -> list:
        """Hooks on the network's own modules that append the stream at every readout point, in
        forward order, each time the network runs its own ``forward`` (the evaluator's batched pass):
        (rows, ...) per point, where a position is ``prepared.inputs.shape[0]`` rows. A forward run
        in chunks appends each chunk's points in turn. Returns the handles (capability "timeline")."""
        raise ValueError(self.why_not("timeline"))

    def timeline_prepare(self, board: chess.Board) -> tuple[Prepared, int]:
        """The position made ready for reading points a pass already produced, and its rows in that
        pass. Its ``inputs`` are not needed, so a family may skip encoding them."""
        prepared = self.prepare(board)
        return prepared, prepared.inputs.shape[0]

    def move_logits(self, prepared: Sequence[Prepared], residual: torch.Tensor,
                    rows: Sequence[int]) -> list[torch.Tensor]:
        """One readout point of several positions (``rows[i]`` rows each, stacked in order) read
        through the policy head: each position's legal-move logits, (moves,) in ``Prepared.moves``
        order. The timeline needs nothing else, so a family may compute just these entries (no
        value head, no full policy)."""
        out = []
        for p, part in zip(prepared, residual.split(list(rows))):
            out.append(self.unembed(p, part, None).logits[0])
        return out
