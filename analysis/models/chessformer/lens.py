"""The Chessformer seen by the lens (``analysis.models.lens.LensAdapter``).

Readout points: ``embed`` (the gated input embedding), then per layer i ``i.attn`` (after
norm1(alpha x + attention)) and ``i.mlp`` (the block's output, after norm2). The heads read the
last block's output directly, so ``{L-1}.mlp`` through the heads is the network's own output.

Around the Post-LN norms: every block point is read *after* its RMS norm, where the stream is
renormalised anyway, so the lens feeds the heads a vector of the scale they were trained on and
adds no norm of its own; only ``embed`` is read raw (no norm precedes it). A head's write is
scaled *before* the norm that follows it (exactly where the network adds it), so the norm then
reacts to the change as it would.

Units: ``head`` (layers x heads): (A_h V_h [+ Shaw's value term]) W_O^(h), scaled in the
concatenated heads entering the output projection; ``mlp`` (layers x ffn): Mish hidden unit n,
whose write is h_n W_2[:, n], scaled where it enters the second linear.

Attention split (capability ``split``): the logits are content plus position, so the map is
softmax(q k^T / sqrt(D) + position): ``relative_bias`` adds one learned logit per head and
displacement, ``shaw`` adds (q_i.a^K_ij + a^Q_ij.k_j + a^Q_ij.a^K_ij) / sqrt(D) (Shaw's value
term a^V enters after the softmax, so it is no part of the map). An ``absolute`` net adds its
position to the tokens before Q and K, so its logits hold no separate position term.
"""

from __future__ import annotations

import math
from typing import Mapping

import chess
import numpy as np
import torch
import torch.nn.functional as F

from analysis.models.lens import LensAdapter, Prepared, ReadOut, UnitKind, hooks, scale_units

NO_SPLIT_ABSOLUTE = ("this Chessformer uses absolute positions: they are added to the tokens before Q and K, "
                     "so its attention logits have no separate position term to split off")


class ChessformerLens(LensAdapter):
    family = "chessformer"
    norm_note = ("Post-LN (DeepNorm): each block point is read after its RMS norm, so the heads see "
                 "in-scale input and the lens adds no norm; embed is read raw.")

    def __init__(self, model, encoding):
        super().__init__(model, encoding)
        config = model.config
        self.readouts = ("embed", *(f"{i}.{part}" for i in range(config.layers) for part in ("attn", "mlp")))
        self.units = {
            "head": UnitKind("head", config.layers, config.heads, "attention head"),
            "mlp": UnitKind("mlp", config.layers, config.ffn, "MLP hidden unit (Mish)"),
        }
        self.unavailable = {"split": NO_SPLIT_ABSOLUTE} if config.position == "absolute" else {}
        self._policy_entries = model.policy.gather_index.cpu().numpy()  # each move's entry of the full policy

    def prepare(self, board: chess.Board) -> Prepared:
        moves, indices = self.encoding.legal_moves(board)
        inputs = torch.from_numpy(self.encoding.encode([board])).to(self.device)
        return Prepared(board, list(moves), inputs, {"indices": torch.as_tensor(indices, device=self.device)})

    def _scale_hooks(self, scales: Mapping[str, torch.Tensor]):
        """Pre-hooks scaling each head's slice of the output projection's input and each MLP unit."""
        handles = []
        for i, layer in enumerate(self.model.layers):
            if "head" in scales:
                head_scale = scales["head"][:, i]
                handles.append(layer.attention.out.register_forward_pre_hook(
                    lambda _m, args, s=head_scale: (scale_units(args[0], s, self.model.config.head_dim),)))
            if "mlp" in scales:
                unit_scale = scales["mlp"][:, i]
                handles.append(layer.ffn[2].register_forward_pre_hook(
                    lambda _m, args, s=unit_scale: (scale_units(args[0], s),)))
        return handles

    def _point_hooks(self, fn):
        """Hooks calling ``fn(point index, stream)`` at every readout point in forward order; a
        tensor it returns replaces the stream there (None leaves it)."""
        layers = self.model.layers

        def embed(_m, args):
            x = fn(0, args[0])
            return None if x is None else (x, *args[1:])

        def block(i):
            def hook(_m, _a, out):
                x = fn(2 + 2 * i, out[0])
                return None if x is None else (x, *out[1:])
            return hook

        handles = [layers[0].register_forward_pre_hook(embed)]
        for i, layer in enumerate(layers):
            handles.append(layer.norm1.register_forward_hook(lambda _m, _a, out, i=i: fn(1 + 2 * i, out)))
            handles.append(layer.register_forward_hook(block(i)))
        return handles

    def capture_hooks(self, store: list):
        return self._point_hooks(lambda _i, x: store.append(x))

    def square_rows(self, prepared, point):
        order = self.encoding.square_tokens(prepared.board)
        return torch.as_tensor(np.arange(64) if order is None else order, device=self.device)

    def run(self, prepared, variants=1, scales=None, capture=False, patches=()):
        store: list[torch.Tensor] = []
        by_point = self.patches_at(prepared, variants, patches)
        handles = (self._scale_hooks(scales or {}) + self.head_hooks(prepared, variants, patches)
                   + (self._point_hooks(lambda i, x: self.patched(prepared, i, x, by_point)) if by_point else [])
                   + (self.capture_hooks(store) if capture else []))
        tokens = prepared.inputs.expand(variants, *prepared.inputs.shape[1:])
        with hooks(*handles):
            # _forward: the CPU path would split a large batch into chunks, which per-variant hooks must not see
            out = self.model._forward(tokens, False)
        return (store if capture else None), self._read(prepared, out["policy"], out["wdl"])

    def head_modules(self, layer):
        attention = self.model.layers[layer].attention
        return attention, attention.out

    def attend(self, attention, x):
        """``SelfAttention.forward`` with its weights in the open (Shaw's value term follows them)."""
        B, T, E = x.shape
        H, D = attention.heads, attention.head_dim
        source = x + attention.absolute if attention.position == "absolute" else x
        q, k, v = (f(source).view(B, T, H, D).transpose(1, 2) for f in (attention.q, attention.k, attention.v))
        scale = 1.0 / math.sqrt(D)
        if attention.position == "shaw":
            logits = (q @ k.transpose(-1, -2) + attention._shaw_logit_terms(q, k)) * scale
        else:
            logits = (q @ k.transpose(-1, -2)) * scale
            if attention.position == "relative_bias":
                logits = logits + attention.relative_bias[:, attention.rel]

        def finish(weights):
            out = weights @ v
            if attention.position == "shaw":
                out = out + attention._shaw_value_term(weights)
            return out.transpose(1, 2).reshape(B, T, E)
        return logits.softmax(dim=-1), finish

    def _read(self, prepared: Prepared, policy: torch.Tensor, wdl_logits: torch.Tensor) -> ReadOut:
        wdl = wdl_logits.float().softmax(-1)
        return ReadOut(logits=policy.float()[:, prepared.extra["indices"]], score=wdl[:, 0] + 0.5 * wdl[:, 1], wdl=wdl)

    def unembed(self, prepared, residual, readout):
        model = self.model
        policy = model.policy(F.mish(model.policy_embed(residual)))
        return self._read(prepared, policy, model.result(residual)["wdl"])

    def timeline_prepare(self, board):
        """One row a position and no inputs to encode; ``extra``: each legal move's from- and
        to-square in the network's frame (a promotion's from rank 7 to rank 8) and its promotion
        piece (-1 for none: a plain from-to logit), so the policy head reads just those."""
        moves, indices = self.encoding.legal_moves(board)
        flat = self._policy_entries[np.asarray(indices, dtype=np.int64)]
        promotion = flat >= 4096  # 64 x 64 from-to logits, then 8 from-files x 8 to-files x 3 pieces
        start = np.where(promotion, 48 + (flat - 4096) // 24, flat // 64)
        end = np.where(promotion, 56 + (flat - 4096) % 24 // 3, flat % 64)
        piece = np.where(promotion, (flat - 4096) % 3, -1)
        return Prepared(board, list(moves), None, {"squares": np.stack([start, end, piece])}), 1

    def _bilinear(self) -> tuple[torch.Tensor, ...]:
        """The policy head's q.k folded once (in float64): q_s.k_t = (p_s G + h).p_t + p_s.w + c for
        the embedded squares p (G = W_q^T W_k, h = b_q W_k, w = W_q^T b_k, c = b_q.b_k), so a move
        needs no key of its own: one product a from-square instead of one a to-square."""
        if not hasattr(self, "_folded"):
            head = self.model.policy
            wq, bq = head.query.weight.double(), head.query.bias.double()
            wk, bk = head.key.weight.double(), head.key.bias.double()
            dtype = head.query.weight.dtype
            self._folded = tuple(t.to(dtype) for t in (wq.T @ wk, bq @ wk, wq.T @ bk, bq @ bk))
        return self._folded

    def move_logits(self, prepared, residual, rows):
        """Only the legal moves' entries of the attention policy: the policy embedding on their from-
        and to-squares, the folded q.k (``_bilinear``) from each from-square, one dot product a move,
        plus a promotion's offsets (from the keys of its to-squares alone)."""
        model, head, E = self.model, self.model.policy, residual.shape[-1]
        counts = [len(p.moves) for p in prepared]
        start, end, piece = torch.from_numpy(np.concatenate([p.extra["squares"] for p in prepared], axis=1))
        offset = torch.from_numpy(np.repeat(np.arange(0, 64 * len(prepared), 64), counts))
        device = residual.device
        start, end, piece = (start + offset).to(device), (end + offset).to(device), piece.to(device)
        tokens = residual.reshape(-1, E)
        (starts, start_at), (ends, end_at) = start.unique(return_inverse=True), end.unique(return_inverse=True)
        embed_from = F.mish(model.policy_embed(tokens.index_select(0, starts)))  # index_select: a fast row gather
        embed_to = F.mish(model.policy_embed(tokens.index_select(0, ends)))
        G, h, w, c = self._bilinear()
        u, e = torch.addmm(h, embed_from, G), embed_from @ w + c
        logits = (u.index_select(0, start_at) * embed_to.index_select(0, end_at)).sum(-1) + e.index_select(0, start_at)
        promotion = piece >= 0
        if promotion.any():
            offsets = head.promotion(head.key(embed_to[end_at[promotion]]))  # (P, 4): q r b n
            logits[promotion] = logits[promotion] + (offsets.gather(1, piece[promotion, None])[:, 0] + offsets[:, 3])
        return list((logits * head.scale).float().split(counts))

    def head_writes(self, prepared, layer):
        attention = self.model.layers[layer].attention
        seen = {}
        pre = attention.out.register_forward_pre_hook(lambda _m, args: seen.__setitem__("heads", args[0]))
        post = attention.out.register_forward_hook(lambda _m, _a, out: seen.__setitem__("out", out))
        with hooks(pre, post), torch.no_grad():
            self.model._forward(prepared.inputs, False)
        H, D = self.model.config.heads, self.model.config.head_dim
        heads = seen["heads"].unflatten(-1, (H, D))  # (1, T, H, D)
        weight = attention.out.weight.unflatten(1, (H, D))  # (E, H, D)
        writes = torch.einsum("bthd,ehd->hbte", heads, weight)  # (H, 1, T, E)
        return writes, attention.out.bias, seen["out"]

    @torch.no_grad()
    def attention_split(self, prepared, layer):
        """``layer``'s maps (H, 64, 64) by real squares: "content" softmax(q k^T / sqrt(D)), "position"
        the logits the position representation adds to it (scaled as in the forward), "final" the
        softmax of their sum, which is the network's own map."""
        if not self.has("split"):
            raise ValueError(self.why_not("split"))
        if not 0 <= layer < len(self.model.layers):
            raise ValueError(f"layer {layer} is out of range: the network has {len(self.model.layers)} layers")
        attention = self.model.layers[layer].attention
        seen = []
        handle = self.model.layers[layer].register_forward_pre_hook(lambda _m, args: seen.append(args[0]))
        with hooks(handle):
            self.model._forward(prepared.inputs, False)
        x = seen[0]  # (1, T, E): the stream entering the layer
        T, H, D = x.shape[1], attention.heads, attention.head_dim
        q, k = (f(x).view(1, T, H, D).transpose(1, 2) for f in (attention.q, attention.k))
        scale = 1.0 / math.sqrt(D)
        content = (q @ k.transpose(-1, -2)) * scale  # (1, H, T, T), the mover's frame
        if attention.position == "shaw":
            position = attention._shaw_logit_terms(q, k) * scale
        else:
            position = attention.relative_bias[:, attention.rel].expand_as(content)
        maps = {"content": content.softmax(-1), "position": position, "final": (content + position).softmax(-1)}
        order = self.encoding.square_tokens(prepared.board)
        if order is None:
            return {name: m[0] for name, m in maps.items()}
        rows = torch.as_tensor(order, device=x.device)
        return {name: m[0][:, rows][:, :, rows] for name, m in maps.items()}

    def activations(self, prepared, kind, layer):
        """(B, 64, ffn): layer ``layer``'s Mish units where they enter W_2, on every real square (neurons)."""
        if kind != "mlp":
            raise ValueError(f"{kind!r} units have no activations to read; 'mlp' units do")
        kept = []
        handle = self.model.layers[layer].ffn[2].register_forward_pre_hook(lambda _m, args: kept.append(args[0]))
        with hooks(handle), torch.no_grad():
            self.model._forward(torch.cat([p.inputs for p in prepared]), False)
        rows = [self.encoding.square_tokens(p.board) for p in prepared]
        rows = torch.as_tensor(np.stack([np.arange(64) if r is None else r for r in rows]), device=self.device)
        return kept[0].gather(1, rows[:, :, None].expand(-1, -1, kept[0].shape[-1]))


def lens(model, encoding) -> ChessformerLens:
    return ChessformerLens(model, encoding)
