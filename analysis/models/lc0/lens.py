"""The lens on lc0's attention bodies (``lc0-attention``); the SE-ResNets' is ``lens_resnet``.

lc0's body is Post-LN with DeepNorm: each encoder layer is ``x = LN1(alpha * MHA(x) + x)`` then
``x = LN2(alpha * FFN(x) + x)``. Every readout point is the output of one of those norms, so the
stream read there is in the space the heads read, and the lens skips no norm: the last readout
through the heads is the network's own output. Readout points, in forward order: ``embed``, then
``L.attn`` (after LN1) and ``L.mlp`` (after LN2) for every layer L.

A head's exact write is its slice of the output projection applied to its own ``A_h V_h``:
``write_h = (A_h V_h) W_O[:, h]^T``; the writes plus the projection's bias are the attention
output. Scaling a head multiplies its ``A_h V_h`` (so its write) by s before the projection. An
``mlp`` unit of layer L is one hidden unit of that layer's FFN: its write on a square is
``act(h) * W_2[:, n]``; scaling it multiplies its activation by s on every square.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping, Sequence

import chess
import torch
from torch import nn

from analysis.encoding.lc0_formats import encode_boards, encode_position, move_indices, square_map
from analysis.models.lens import LensAdapter, Prepared, ReadOut, UnitKind, hooks, scale_units

NORM_NOTE = ("lc0's body is Post-LN: every readout point is the output of a layer norm, the very space "
             "the heads read, so the lens reads each point through the heads unchanged and skips no norm.")


@contextmanager
def pre_hooks(pairs: list[tuple[nn.Module, object]]) -> Iterator[None]:
    """Forward pre-hooks on modules for the length of a block, removed however it ends."""
    with hooks(*(module.register_forward_pre_hook(fn) for module, fn in pairs)):
        yield


def scaling(scale: torch.Tensor, group: int = 1):
    """A pre-hook scaling its module's input: (V, U) scales on U units of ``group`` channels each."""
    return lambda module, args: (scale_units(args[0], scale, group),)


def prepare_lc0(model: nn.Module, board: chess.Board) -> Prepared:
    """A board as lc0's planes for ``model``'s input format; ``extra["rows"]``: the token of each real square."""
    planes, encoded = encode_boards([board], model.config.input_format)
    device = next(model.parameters()).device
    moves = list(board.legal_moves)
    return Prepared(board=board, moves=moves, inputs=torch.from_numpy(planes).transpose(1, 2).to(device),
                    extra={"indices": torch.from_numpy(move_indices(board, moves, encoded[0].transform)).to(device),
                           "rows": torch.from_numpy(square_map(board, encoded[0].transform)).to(device)})


def read_lc0(prepared: Prepared, out: Mapping[str, torch.Tensor]) -> ReadOut:
    """The network's raw outputs as the lens's ReadOut: legal moves' logits, expected score, WDL."""
    return ReadOut(logits=out["policy"][:, prepared.extra["indices"]], score=(out["q"] + 1) / 2,
                   wdl=out.get("wdl"))


def timeline_prepare_lc0(model: nn.Module, board: chess.Board) -> tuple[Prepared, int]:
    """A board's legal moves and policy indices without its planes (the timeline reads points a
    pass already made): one row a position; only a canonical format needs the position's transform."""
    moves = list(board.legal_moves)
    fmt = model.config.input_format
    transform = encode_position(board, fmt).transform if fmt >= 3 else 0
    return Prepared(board, moves, None, {"indices": torch.from_numpy(move_indices(board, moves, transform))}), 1


def gather_moves(policy: torch.Tensor, prepared: Sequence[Prepared]) -> list[torch.Tensor]:
    """One policy row a position (the timeline's ``move_logits``): each position's legal moves."""
    return [row[p.extra["indices"].to(row.device)].float() for row, p in zip(policy, prepared)]


def stack_inputs(prepared: Sequence[Prepared]) -> torch.Tensor:
    return torch.cat([p.inputs for p in prepared])


class AttentionLens(LensAdapter):
    """``lc0-attention``: heads and FFN units of every encoder layer, smolgen's bias apart."""

    family = "lc0-attention"
    norm_note = NORM_NOTE

    def __init__(self, model: nn.Module, encoding=None):
        super().__init__(model, encoding)
        c = model.config
        self.readouts = ["embed"] + [f"{i}.{kind}" for i in range(c.encoders) for kind in ("attn", "mlp")]
        self.units = {"head": UnitKind("head", c.encoders, c.heads, "an attention head of an encoder layer"),
                      "mlp": UnitKind("mlp", c.encoders, c.ffn, "a hidden unit of an encoder layer's FFN")}
        self.unavailable = {} if c.wdl else {"wdl": "this lc0 net's value head is a single tanh: it has no WDL"}
        if not c.smolgen_compress:
            self.unavailable["split"] = ("this lc0 net has no smolgen: its attention logits are QK^T alone, "
                                         "with no position term to split off")

    def prepare(self, board: chess.Board) -> Prepared:
        return prepare_lc0(self.model, board)

    def _hooks(self, scales: Mapping[str, torch.Tensor]) -> list:
        pairs = []
        for i, layer in enumerate(self.model.encoders):
            if "head" in scales:
                depth = layer.mha.dense.in_features // layer.mha.heads
                pairs.append((layer.mha.dense, scaling(scales["head"][:, i], depth)))
            if "mlp" in scales:
                pairs.append((layer.ffn.dense2, scaling(scales["mlp"][:, i])))
        return pairs

    def run(self, prepared: Prepared, variants: int = 1, scales: Mapping[str, torch.Tensor] | None = None,
            capture: bool = False, patches=()) -> tuple[list[torch.Tensor] | None, ReadOut]:
        tokens = prepared.inputs.expand(variants, -1, -1)
        by_point = self.patches_at(prepared, variants, patches)
        with pre_hooks(self._hooks(scales or {})), hooks(*self.head_hooks(prepared, variants, patches)):
            out, seen = self.forward(tokens, capture, lambda i, x: self.patched(prepared, i, x, by_point))
        return (seen if capture else None), read_lc0(prepared, out)

    def forward(self, tokens: torch.Tensor, capture: bool, at=None) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
        """The body as ``EncoderLayer.forward`` runs it, with the stream kept at every readout point
        (``at(point index, stream)``, when given, returns the stream that goes on: the patches)."""
        at = at or (lambda _i, x: x)
        x = at(0, self.model.embedding(tokens))
        seen = [x] if capture else []
        for i, layer in enumerate(self.model.encoders):
            x = at(1 + 2 * i, layer.ln1(layer.alpha * layer.mha(x, False)[0] + x))
            seen += [x] if capture else []
            x = at(2 + 2 * i, layer.ln2(layer.alpha * layer.ffn(x) + x))
            seen += [x] if capture else []
        return self.model.outputs(x, every_head=False), seen

    def square_rows(self, prepared: Prepared, point: str) -> torch.Tensor:
        return prepared.extra["rows"]

    def head_modules(self, layer: int):
        mha = self.model.encoders[layer].mha
        return mha, mha.dense

    def attend(self, mha: nn.Module, x: torch.Tensor):
        """``SelfAttention.forward`` (encoder.py) with its weights in the open."""
        B, T, _ = x.shape
        q, k, v = (f(x).view(B, T, mha.heads, -1).transpose(1, 2) for f in (mha.q, mha.k, mha.v))
        logits = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
        if mha.smolgen is not None:
            logits = logits + mha.smolgen(x)
        return torch.softmax(logits, dim=-1), lambda weights: (weights @ v).transpose(1, 2).reshape(B, T, -1)

    def unembed(self, prepared: Prepared, residual: torch.Tensor, readout: str) -> ReadOut:
        if readout is not None and readout not in self.readouts:  # None: a stack of several points
            raise ValueError(f"unknown readout point {readout!r}")
        return read_lc0(prepared, self.model.outputs(residual, every_head=False))

    def timeline_prepare(self, board):
        return timeline_prepare_lc0(self.model, board)

    def move_logits(self, prepared, residual, rows):
        """One point of many positions through the default policy head alone, in one call."""
        m = self.model
        embedded = m.policy_embedding(residual) if m.policy_embedding is not None else None
        return gather_moves(m.policy_heads[m.config.policy_head](residual, embedded), prepared)

    def capture_hooks(self, store: list) -> list:
        """The same points as ``forward`` keeps, read from the network's own pass: the embedding's
        output, then each encoder layer's LN1 and LN2 outputs."""
        keep = lambda _m, _a, out: store.append(out)  # noqa: E731
        modules = [self.model.embedding] + [ln for layer in self.model.encoders for ln in (layer.ln1, layer.ln2)]
        return [module.register_forward_hook(keep) for module in modules]

    def layer_input(self, tokens: torch.Tensor, layer: int) -> torch.Tensor:
        """The stream entering encoder ``layer`` (the embedding, or the previous block's output)."""
        return self.forward(tokens, True)[1][2 * layer]

    @torch.no_grad()
    def head_writes(self, prepared: Prepared, layer: int):
        mha = self.model.encoders[layer].mha
        x = self.layer_input(prepared.inputs, layer)
        captured = []
        with pre_hooks([(mha.dense, lambda module, args: captured.append(args[0]))]):
            attended = mha(x, False)[0][0]  # (T, E)
        per_head = captured[0][0].view(x.shape[1], mha.heads, -1)  # (T, H, D)
        weight = mha.dense.weight.view(mha.dense.out_features, mha.heads, -1)  # (E, H, D)
        return torch.einsum("thd,ehd->hte", per_head, weight), mha.dense.bias, attended

    @torch.no_grad()
    def attention_split(self, prepared: Prepared, layer: int) -> dict[str, torch.Tensor]:
        """``layer``'s maps (H, 64, 64) by real squares: "content" softmax(QK^T / sqrt(D)) alone,
        "position" smolgen's bias (the logits it adds to QK^T / sqrt(D)), "final" softmax of the sum."""
        if not self.has("split"):
            raise ValueError(self.why_not("split"))
        mha = self.model.encoders[layer].mha
        x = self.layer_input(prepared.inputs, layer)
        t = x.shape[1]
        q, k = (f(x).view(1, t, mha.heads, -1).transpose(1, 2) for f in (mha.q, mha.k))
        logits = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)  # (1, H, T, T), network frame
        bias = mha.smolgen(x)
        rows = prepared.extra["rows"]
        maps = {"content": torch.softmax(logits, dim=-1), "position": bias,
                "final": torch.softmax(logits + bias, dim=-1)}
        return {name: m[0][:, rows][:, :, rows] for name, m in maps.items()}

    @torch.no_grad()
    def activations(self, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
        """(B, 64, F): every FFN unit of ``layer`` on every real square (a1 = 0), one batch."""
        if kind != "mlp":
            raise ValueError(f"{kind!r} units have no activations to read")
        enc = self.model.encoders[layer]
        x = self.layer_input(stack_inputs(prepared), layer)
        x = enc.ln1(enc.alpha * enc.mha(x, False)[0] + x)
        acts = enc.ffn.act(enc.ffn.dense1(x))  # (B, T, F), network frame
        rows = torch.stack([p.extra["rows"] for p in prepared])  # (B, 64)
        return acts.gather(1, rows[:, :, None].expand(-1, -1, acts.shape[-1]))
