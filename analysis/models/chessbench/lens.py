"""ChessBench seen by the lens (``analysis.models.lens.LensAdapter``).

The tokens are not squares: BOS, the FEN's 77 characters and, for action-value nets, the move
(one row per legal move). Readout points: ``embed`` (token plus position embedding), then per
block i ``i.attn`` (x + attention(norm1 x)) and ``i.mlp`` (the block's output); each is read at
the last position, where the network reads its own output.

Around the Pre-LN norms: the stream between blocks is never normalised, so the lens reads every
point through the network's own final LayerNorm and head, exactly as the network reads its last
block's output; ``{L-1}.mlp`` therefore gives the network's own output.

What the policy logit is, per head: a behavioural-cloning net's raw logit of the move; an
action-value net's move win probability divided by the policy temperature the evaluator uses
(``POLICY_TEMPERATURE``), the number whose softmax is its policy; a state-value net has no policy.
The score: the move-maximum win probability (action value), the win probability (state value).
No ChessBench net has WDL.

Units: ``head`` (layers x heads), A_h V_h W_O^(h) (no output bias); ``mlp`` (layers x
widening * embed), SwiGLU hidden unit n, silu(x W_gate)_n (x W_up)_n, whose write is its
product with W_down[:, n]. A scale applies to every row of the position (each legal move's) and
every token.

Neurons (``activations``): an ``mlp`` unit's activation is that product where it enters W_down, read
on the 64 board-square tokens of the FEN and put on real squares as the attention maps are (the
encoding's ``square_tokens``, one place on for BOS). The other tokens have no square and are left
out: BOS, side to move, castling (4), en passant (2), the two clocks (3 + 3) and, for action-value
nets, the move. An action-value position's activation is the mean over its legal moves' rows (its
board tokens differ between rows only through attention to the move), as its attention maps are.
"""

from __future__ import annotations

import math
from typing import Sequence

import chess
import numpy as np
import torch

from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, STATE_VALUE
from analysis.models.chessbench.decoding import POLICY_TEMPERATURE, bin_centres, inputs
from analysis.models.lens import LensAdapter, Prepared, ReadOut, UnitKind, hooks, scale_units

NO_WDL = "ChessBench's value bins predict a win probability, not its draw share, so there is no WDL"
NO_SPLIT = ("ChessBench adds a learned position embedding to its tokens before Q and K, so its attention "
            "logits are QK^T alone, with no separate position term to split off")


class ChessBenchLens(LensAdapter):
    family = "chessbench"
    norm_note = ("Pre-LN: every point is read through the network's own final LayerNorm and head, "
                 "as the network reads its last block.")

    def __init__(self, model, encoding):
        super().__init__(model, encoding)
        config = model.config
        self.readouts = ("embed", *(f"{i}.{part}" for i in range(config.layers) for part in ("attn", "mlp")))
        self.units = {
            "head": UnitKind("head", config.layers, config.heads, "attention head"),
            "mlp": UnitKind("mlp", config.layers, config.widening * config.embed, "SwiGLU hidden unit"),
        }
        self.unavailable = {"wdl": NO_WDL, "split": NO_SPLIT}
        if config.head == STATE_VALUE:
            self.unavailable["policy"] = "a state-value ChessBench net predicts the position's value only, no policy"
        if config.head == BEHAVIOURAL_CLONING:
            self.unavailable["value"] = "a behavioural-cloning ChessBench net predicts moves only, no value"
        centres = torch.as_tensor(bin_centres(config.bins), dtype=torch.float32)
        self._centres = centres.to(self.device)

    def prepare(self, board: chess.Board) -> Prepared:
        moves, actions = self.encoding.legal_moves(board)
        rows = torch.from_numpy(inputs([board], self.encoding, self.model.config)).to(self.device)
        return Prepared(board, list(moves), rows, {"actions": torch.as_tensor(actions, device=self.device).long()})

    def _scale_hooks(self, scales, rows: int):
        handles = []
        for i, block in enumerate(self.model.blocks):
            if "head" in scales:
                head_scale = scales["head"][:, i].repeat_interleave(rows, 0)
                handles.append(block.attention.out.register_forward_pre_hook(
                    lambda _m, args, s=head_scale: (scale_units(args[0], s, self.model.config.head_dim),)))
            if "mlp" in scales:
                unit_scale = scales["mlp"][:, i].repeat_interleave(rows, 0)
                handles.append(block.ffn.down.register_forward_pre_hook(
                    lambda _m, args, s=unit_scale: (scale_units(args[0], s),)))
        return handles

    def capture_hooks(self, store: list):
        blocks = self.model.blocks
        handles = [blocks[0].register_forward_pre_hook(lambda _m, args: store.append(args[0]))]
        for block in blocks:
            handles.append(block.norm2.register_forward_pre_hook(lambda _m, args: store.append(args[0])))
            handles.append(block.register_forward_hook(lambda _m, _a, out: store.append(out[0])))
        return handles

    def run(self, prepared, variants=1, scales=None, capture=False, patches=()):
        store: list[torch.Tensor] = []
        rows = prepared.inputs.shape[0]
        by_point = self.patches_at(prepared, variants, patches)

        def at(i, x):
            x = self.patched(prepared, i, x, by_point)
            if capture:
                store.append(x)
            return x
        with hooks(*self._scale_hooks(scales or {}, rows), *self.head_hooks(prepared, variants, patches)):
            logits = self._forward(prepared.inputs.repeat(variants, 1), at)
        return (store if capture else None), self._read(prepared, logits, variants)

    def _forward(self, rows: torch.Tensor, at) -> torch.Tensor:
        """``ChessBenchTransformer.forward`` written out, with ``at(point index, stream)`` giving the
        stream that goes on at every readout point (``i.attn`` is no module's output: x + attention)."""
        m = self.model
        shifted = torch.cat([rows.new_zeros(rows.shape[0], 1), rows.long()], dim=1)  # BOS id 0 in front
        x = at(0, m.token_embed(shifted) * math.sqrt(m.config.embed) + m.position_embed(m.positions))
        for i, block in enumerate(m.blocks):
            x = at(1 + 2 * i, x + block.attention(block.norm1(x))[0])
            x = at(2 + 2 * i, x + block.ffn(block.norm2(x)))
        return m.head(m.final_norm(x[:, -1]))

    def head_modules(self, layer):
        attention = self.model.blocks[layer].attention
        return attention, attention.out

    def attend(self, attention, x):
        """``SelfAttention.forward``'s explicit-weights path (the one it takes for its maps)."""
        B, T, D = x.shape
        q, k, v = (proj(x).view(B, T, attention.heads, attention.head_dim).transpose(1, 2)
                   for proj in (attention.q, attention.k, attention.v))
        weights = ((q @ k.transpose(-1, -2)).float() / math.sqrt(attention.head_dim)).softmax(-1)
        return weights, lambda w: (w.to(v.dtype) @ v).transpose(1, 2).reshape(B, T, D)

    def square_rows(self, prepared, point):
        """The 64 board tokens (BOS shifts the FEN's by one); the other tokens have no square."""
        return torch.as_tensor(1 + np.asarray(self.encoding.square_tokens(prepared.board)), device=self.device)

    def to_tokens(self, prepared, point, tensor):
        """(V * rows, T, E) -> (V, T, rows * E): an action-value position's rows (one a legal move,
        in ``Prepared.moves`` order) side by side, so a square is patched in every row at once."""
        rows = prepared.inputs.shape[0]
        T, E = tensor.shape[-2:]
        return tensor.view(-1, rows, T, E).transpose(1, 2).reshape(-1, T, rows * E)

    def from_tokens(self, prepared, point, tokens):
        rows = prepared.inputs.shape[0]
        V, T, _ = tokens.shape
        return tokens.view(V, T, rows, -1).transpose(1, 2).reshape(V * rows, T, -1)

    def aligned(self, source, target):
        """An action-value net runs one row a legal move: ``source``'s board is given the target's
        moves, so row r is the same move in both passes (a move illegal on the source board is
        still a token the network reads); the other heads read the board alone."""
        if self.model.config.head != ACTION_VALUE:
            return source
        fen = source.inputs[:1, :-1]
        actions = target.extra["actions"]
        if not len(actions):  # no legal move: the one dummy row the target runs too
            return Prepared(source.board, [], source.inputs[:1], {"actions": actions})
        rows = torch.cat([fen.expand(len(actions), -1), actions[:, None].to(fen.dtype)], dim=1)
        return Prepared(source.board, list(target.moves), rows.contiguous(), {"actions": actions})

    def _read(self, prepared: Prepared, logits: torch.Tensor, variants: int) -> ReadOut:
        """The head's raw output (variants * rows, outputs) as policy logits and a score."""
        logits = logits.float()
        head = self.model.config.head
        if head == BEHAVIOURAL_CLONING:
            return ReadOut(logits=logits[:, prepared.extra["actions"]], score=None)
        wins = (logits.softmax(-1) @ self._centres).view(variants, -1)  # (V, rows)
        if head == STATE_VALUE:
            return ReadOut(logits=None, score=wins[:, 0])
        return ReadOut(logits=wins / POLICY_TEMPERATURE, score=wins.max(-1).values)

    def unembed(self, prepared, residual, readout):
        model = self.model
        variants = residual.shape[0] // prepared.inputs.shape[0]
        return self._read(prepared, model.head(model.final_norm(residual[:, -1])), variants)

    def head_writes(self, prepared, layer):
        attention = self.model.blocks[layer].attention
        seen = {}
        pre = attention.out.register_forward_pre_hook(lambda _m, args: seen.__setitem__("heads", args[0]))
        post = attention.out.register_forward_hook(lambda _m, _a, out: seen.__setitem__("out", out))
        with hooks(pre, post), torch.no_grad():
            self.model(prepared.inputs)
        H, D = self.model.config.heads, self.model.config.head_dim
        heads = seen["heads"].unflatten(-1, (H, D))  # (rows, T, H, D)
        weight = attention.out.weight.unflatten(1, (H, D))  # (E, H, D)
        return torch.einsum("bthd,ehd->hbte", heads, weight), None, seen["out"]

    def activations(self, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
        """(B, 64, widening * embed): layer ``layer``'s SwiGLU units where they enter W_down, on the
        board-square tokens in real squares (a1 = 0); action-value rows averaged per position."""
        if kind != "mlp":
            raise ValueError(f"{kind!r} units have no activations to read; 'mlp' units do")
        kept = []
        handle = self.model.blocks[layer].ffn.down.register_forward_pre_hook(lambda _m, args: kept.append(args[0]))
        with hooks(handle), torch.no_grad():
            self.model(torch.cat([p.inputs for p in prepared]))
        rows = torch.split(kept[0], [p.inputs.shape[0] for p in prepared])  # per position: (rows, T, F)
        return torch.stack([self._board_tokens(r.float().mean(0), p.board) for r, p in zip(rows, prepared)])

    def _board_tokens(self, acts: torch.Tensor, board: chess.Board) -> torch.Tensor:
        """(T, F) over the model's sequence (BOS first) -> (64, F) on real squares."""
        order = 1 + np.asarray(self.encoding.square_tokens(board))  # BOS shifts every FEN token by one
        return acts[torch.as_tensor(order, device=acts.device)]


def lens(model, encoding) -> ChessBenchLens:
    return ChessBenchLens(model, encoding)
