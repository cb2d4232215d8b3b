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

__all__ = ["AttentionZero", "CAPABILITIES", "HeadPatch", "LensAdapter", "Patch", "Prepared", "ReadOut",
           "ResidualPatch", "UnitKind", "hooks", "patch_point", "scale_units"]

# The capabilities the lens layer asks about; a family may declare more.
CAPABILITIES = ("policy", "value", "wdl", "head", "mlp", "split", "timeline", "patch", "head_patch",
                "attention_zero")


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


@dataclass(frozen=True)
class ResidualPatch:
    """Rows of readout ``point`` taken from another pass: for variant v, the real squares where
    ``squares[v]`` ((V, 64) bool, a1 = 0) is True come from ``source`` (the point's tensor as
    ``run(..., capture=True)`` returned it for another position, 1 variant broadcast or V). A
    variant whose row is all True takes the whole point from ``source`` (every token, squares or not)."""

    point: str
    source: torch.Tensor
    squares: torch.Tensor


@dataclass(frozen=True)
class HeadPatch:
    """Layer ``layer``'s head writes taken from another pass: for variant v, the heads where
    ``heads[v]`` ((V, H) bool) is True come from ``source``, what ``capture_heads`` returned there."""

    layer: int
    source: torch.Tensor
    heads: torch.Tensor


@dataclass(frozen=True)
class AttentionZero:
    """Post-softmax weights of (``layer``, ``head``) set to 0, not renormalised, where ``entries``
    ((V, 64, 64) bool, [query real square, key real square]) is True."""

    layer: int
    head: int
    entries: torch.Tensor


Patch = ResidualPatch | HeadPatch | AttentionZero


def patch_point(x: torch.Tensor, rows: torch.Tensor, patches: Sequence[ResidualPatch]) -> torch.Tensor:
    """``x`` (V, T, C), one point's tokens, with each patch's squares (their token ``rows``, (64,))
    taken from its source (tokens too, 1 or V variants); an all-True variant takes every token."""
    for patch in patches:
        squares = patch.squares.to(x.device)
        mask = torch.zeros(x.shape[:2], dtype=torch.bool, device=x.device)
        mask[:, rows] = squares
        mask[squares.all(-1)] = True
        x = torch.where(mask[..., None], patch.source.to(x.dtype), x)
    return x


def mix_heads(source: torch.Tensor, heads: torch.Tensor):
    """A pre-hook on a projection reading concatenated heads (N, T, H * D): head h of row n taken from
    ``source`` (1 or N rows, or rows of one variant repeated) where ``heads[n, h]``."""
    def hook(_module, args):
        x = args[0]
        src = source.to(x.dtype)
        if src.shape[0] not in (1, x.shape[0]):
            src = src.repeat(x.shape[0] // src.shape[0], *([1] * (src.dim() - 1)))
        depth = x.shape[-1] // heads.shape[-1]
        mask = heads.repeat_interleave(depth, -1).reshape(x.shape[0], *([1] * (x.dim() - 2)), -1)
        return (torch.where(mask, src, x), *args[1:])
    return hook


def zeroing(attend, projection: torch.nn.Module, rows: torch.Tensor, heads: list):
    """A forward hook on an attention module: its output recomputed (``attend``) with the weights of
    each (head, entries (N, 64, 64) by real square) zeroed, not renormalised, for the rows that zero
    anything; the other rows keep the module's own output bit for bit."""
    def hook(module, args, out):
        weights, finish = attend(module, args[0])
        mask = torch.zeros(weights.shape, dtype=torch.bool, device=weights.device)  # (N, H, T, T)
        for head, entries in heads:
            mask[:, head, rows[:, None], rows[None, :]] |= entries
        touched = mask.flatten(1).any(-1)
        if not touched.any():
            return None
        new = projection(finish(weights.masked_fill(mask, 0.0)))
        return (torch.where(touched.reshape(-1, *([1] * (new.dim() - 1))), new, out[0]), *out[1:])
    return hook


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
        if capability == "patch" and type(self).square_rows is LensAdapter.square_rows:
            return f"the {self.family} lens has no squares to patch"
        if capability == "head_patch" and type(self).head_modules is LensAdapter.head_modules:
            return f"the {self.family} lens does not patch head writes"
        if capability == "attention_zero" and type(self).attend is LensAdapter.attend:
            return f"the {self.family} lens does not zero attention entries"
        if capability not in CAPABILITIES and capability not in self.units:
            return f"unknown capability {capability!r}"
        return None

    @abstractmethod
    def prepare(self, board: chess.Board) -> Prepared:
        """The position's inputs and legal moves (a position without legal moves is the caller's error)."""

    @abstractmethod
    def run(self, prepared: Prepared, variants: int = 1, scales: Mapping[str, torch.Tensor] | None = None,
            capture: bool = False, patches: Sequence[Patch] = ()) -> tuple[list[torch.Tensor] | None, ReadOut]:
        """One forward pass of ``variants`` copies of the position with each unit's write scaled by
        ``scales`` (absent kinds are clean) and ``patches`` applied (``ResidualPatch``, ``HeadPatch``,
        ``AttentionZero``; a patch's source comes from a position prepared the same way, see
        ``aligned``). Returns the residual at every readout point when ``capture`` (one tensor per
        point, V variants stacked first, as patched) and the network's own output.
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

    # -- squares and patching (issue 38). Clean and corrupted positions are prepared the same way,
    # from the FEN alone (``prepare``: an lc0 net's history planes hold the position itself, so a
    # patch never carries a history difference).

    def square_rows(self, prepared: Prepared, point: str) -> torch.Tensor:
        """(64,) long: the row of ``to_tokens`` holding each real square at ``point`` (a1 = 0).
        ValueError (a sentence why) where the point has no squares."""
        raise ValueError(f"the {self.family} lens has no squares at its readout points")

    def to_tokens(self, prepared: Prepared, point: str, tensor: torch.Tensor) -> torch.Tensor:
        """A captured point (V variants first) as (V, T, C) tokens in the network's own order."""
        return tensor

    def from_tokens(self, prepared: Prepared, point: str, tokens: torch.Tensor) -> torch.Tensor:
        """``to_tokens`` undone: (V, T, C) back to the point's own layout."""
        return tokens

    def check_point(self, point: str) -> int:
        """The index of readout ``point`` in forward order (ValueError for an unknown one)."""
        if point not in self.readouts:
            raise ValueError(f"unknown readout point {point!r}: the points are {', '.join(self.readouts)}")
        return list(self.readouts).index(point)

    def square_stream(self, prepared: Prepared, point: str, tensor: torch.Tensor) -> torch.Tensor:
        """The tensor captured at ``point`` (V variants first) by REAL square: (V, 64, C), row s =
        square s (a1 = 0, never the mover's mirror). ValueError where the point has no squares."""
        self.check_point(point)
        rows = self.square_rows(prepared, point).to(tensor.device)
        return self.to_tokens(prepared, point, tensor).index_select(1, rows)

    def point_vector(self, prepared: Prepared, point: str, tensor: torch.Tensor) -> torch.Tensor:
        """(V, C): a point without squares as one vector a variant (families without squares)."""
        raise ValueError(f"the {self.family} lens reads its points by square: use square_stream")

    def aligned(self, source: Prepared, target: Prepared) -> Prepared:
        """``source`` made ready to patch into ``target``'s pass: its rows line up with the target's
        (the same in every family whose pass is one row a position)."""
        return source

    # -- heads (capabilities "head_patch" and "attention_zero"): a family with attention heads names
    # each layer's attention module and the projection that reads its concatenated heads, and writes
    # its attention out with the post-softmax weights in the open (``attend``).

    def head_modules(self, layer: int) -> tuple[torch.nn.Module, torch.nn.Module]:
        """(the attention module of ``layer``, the output projection whose input is its heads
        concatenated, (rows, T, H * D)); the attention module returns (output, weights or None)."""
        raise ValueError(self.why_not("head_patch"))

    def attend(self, attention: torch.nn.Module, x: torch.Tensor):
        """The attention module's forward on its input ``x``, taken apart: (post-softmax weights
        (B, H, T, T), ``finish(weights) -> (B, T, H * D)``, the heads that the projection reads)."""
        raise ValueError(self.why_not("attention_zero"))

    def check_layer(self, layer: int) -> int:
        layers = self.units["head"].layers
        if not 0 <= layer < layers:
            raise ValueError(f"layer {layer} is out of range: the network has {layers} attention layers")
        return layer

    def capture_heads(self, prepared: Prepared, layer: int) -> torch.Tensor:
        """Layer ``layer``'s per-head outputs on ``prepared`` (rows, T, H * D), the projection's input
        (opaque to callers: fed back in a ``HeadPatch``)."""
        _, projection = self.head_modules(self.check_layer(layer))
        kept = []
        with hooks(projection.register_forward_pre_hook(lambda _m, args: kept.append(args[0]))), torch.no_grad():
            self.run(prepared)
        return kept[0]

    def head_hooks(self, prepared: Prepared, variants: int, patches: Sequence[Patch]) -> list:
        """The hooks that apply ``patches``' ``HeadPatch`` and ``AttentionZero`` (after ``patches_at``
        checked them): a head's slice of the projection's input taken from the source; weights zeroed
        by recomputing the attention (``attend``) for the variants that zero any entry."""
        rows_each = prepared.inputs.shape[0] if prepared.inputs is not None else 1  # rows a variant
        handles, zero = [], {}
        for patch in patches:
            if isinstance(patch, HeadPatch):
                _, projection = self.head_modules(self.check_layer(patch.layer))
                heads = torch.as_tensor(patch.heads, dtype=torch.bool, device=self.device)
                if heads.shape != (variants, self.units["head"].per_layer):
                    raise ValueError(f"a head patch's heads must be ({variants}, {self.units['head'].per_layer}), "
                                     f"not {tuple(heads.shape)}")
                handles.append(projection.register_forward_pre_hook(
                    mix_heads(patch.source, heads.repeat_interleave(rows_each, 0))))
            elif isinstance(patch, AttentionZero):
                self.check_layer(patch.layer)
                if not 0 <= patch.head < self.units["head"].per_layer:
                    raise ValueError(f"head {patch.head} is out of range: a layer has "
                                     f"{self.units['head'].per_layer} heads")
                entries = torch.as_tensor(patch.entries, dtype=torch.bool, device=self.device)
                if entries.shape != (variants, 64, 64):
                    raise ValueError(f"an attention zero's entries must be ({variants}, 64, 64), "
                                     f"not {tuple(entries.shape)}")
                zero.setdefault(patch.layer, []).append((patch.head, entries.repeat_interleave(rows_each, 0)))
        rows = self.square_rows(prepared, self.readouts[0]) if zero else None
        for layer, heads in zero.items():
            attention, projection = self.head_modules(layer)
            handles.append(attention.register_forward_hook(zeroing(self.attend, projection, rows, heads)))
        return handles

    def patches_at(self, prepared: Prepared, variants: int, patches: Sequence[Patch]) -> dict[int, list]:
        """The residual patches by point index, their squares (V, 64) and sources (V or 1, T, C)
        checked and put in token order; ValueError (a sentence) for a patch that does not fit."""
        by_point: dict[int, list] = {}
        for patch in patches:
            kind = {ResidualPatch: "patch", HeadPatch: "head_patch", AttentionZero: "attention_zero"}.get(type(patch))
            if kind is None:
                raise ValueError(f"{type(patch).__name__} is not a patch")
            if not self.has(kind):
                raise ValueError(self.why_not(kind))
            if kind != "patch":
                continue
            index = self.check_point(patch.point)
            squares = torch.as_tensor(patch.squares, dtype=torch.bool, device=self.device)
            if squares.shape != (variants, 64):
                raise ValueError(f"a residual patch's squares must be ({variants}, 64), not {tuple(squares.shape)}")
            source = self.to_tokens(prepared, patch.point, patch.source)
            if source.shape[0] not in (1, variants):
                raise ValueError(f"a residual patch's source has {source.shape[0]} variants, not 1 or {variants}")
            by_point.setdefault(index, []).append(ResidualPatch(patch.point, source, squares))
        return by_point

    def patched(self, prepared: Prepared, index: int, x: torch.Tensor, by_point: Mapping[int, list]) -> torch.Tensor:
        """Point ``index``'s stream ``x`` (own layout) with its residual patches applied."""
        if index not in by_point:
            return x
        point = self.readouts[index]
        rows = self.square_rows(prepared, point).to(x.device)
        tokens = patch_point(self.to_tokens(prepared, point, x), rows, by_point[index])
        return self.from_tokens(prepared, point, tokens)

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
