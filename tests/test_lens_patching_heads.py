"""Patching in the lens adapters (issue 38), part 2: head writes from another pass (``HeadPatch``) and
post-softmax attention entries zeroed without renormalising (``AttentionZero``), on every family with
attention heads over squares (Chessformer, lc0 attention, ChessBench)."""

from __future__ import annotations

import chess
import pytest
import torch

from analysis.models.lens import AttentionZero, HeadPatch
from tests.test_lens_patching import BLACK_TO_MOVE, CORRUPTED, NETS

HEADED = ("chessformer", "lc0-attention", "chessbench-bc", "chessbench-av")


@pytest.fixture(scope="module", params=HEADED)
def lens(request, tmp_path_factory):
    return NETS[request.param](tmp_path_factory.mktemp("net"))


def _clean(lens):
    return lens.prepare(chess.Board(BLACK_TO_MOVE))


def _run(lens, prepared, variants=1, **kwargs):
    with torch.no_grad():
        return lens.run(prepared, variants=variants, **kwargs)[1]


def test_zeroing_nothing_is_the_clean_pass(lens):
    clean = _clean(lens)
    nothing = torch.zeros(2, 64, 64, dtype=torch.bool)
    zeroed = _run(lens, clean, 2, patches=[AttentionZero(0, 1, nothing)])
    assert torch.equal(zeroed.logits, _run(lens, clean, 2).logits)


def test_zeroing_a_head_s_every_entry_removes_its_write(lens):
    """With every token a square (Chessformer, lc0), zeroing all of a head's weights is scaling its
    write to 0. ChessBench reads its output at the last token, which is no square: zeroing the
    board-by-board entries of the last layer cannot reach it, while an earlier layer's can."""
    clean = _clean(lens)
    kind = lens.units["head"]
    every = torch.ones(1, 64, 64, dtype=torch.bool)
    for layer in range(kind.layers):
        zeroed = _run(lens, clean, patches=[AttentionZero(layer, 2, every)])
        scales = torch.ones(1, kind.layers, kind.per_layer)
        scales[0, layer, 2] = 0.0
        if lens.family == "chessbench":
            last = layer == kind.layers - 1
            assert torch.allclose(zeroed.logits, _run(lens, clean).logits, atol=1e-5) == last
        else:
            assert torch.allclose(zeroed.logits, _run(lens, clean, scales={"head": scales}).logits, atol=1e-5)


def test_one_zeroed_entry_is_that_query_s_weight_on_that_key_only(lens):
    """Zeroing entry (d4 query, d5 key) of head 1 moves that head's output on d4 (the projection's
    input) and nothing else: no other head, no other query square (d4's mirror d5 included)."""
    clean = _clean(lens)
    entries = torch.zeros(1, 64, 64, dtype=torch.bool)
    entries[0, chess.D4, chess.D5] = True
    attention, projection = lens.head_modules(0)
    kept = {}

    def keep(name):
        # the last call wins: a zeroing hook runs the projection again on the recomputed heads
        return projection.register_forward_hook(lambda _m, args, _out: kept.__setitem__(name, args[0]))
    handle = keep("clean")
    _run(lens, clean)
    handle.remove()
    handle = keep("zeroed")
    _run(lens, clean, patches=[AttentionZero(0, 1, entries)])
    handle.remove()
    rows = lens.square_rows(clean, "embed")
    H = lens.units["head"].per_layer
    clean_heads, zeroed_heads = (kept[k].unflatten(-1, (H, -1)) for k in ("clean", "zeroed"))
    moved = (zeroed_heads - clean_heads).abs().amax(dim=(0, -1))  # (T, H)
    assert moved[rows[chess.D4], 1] > 1e-3
    moved[rows[chess.D4], 1] = 0
    assert moved.max() < 1e-5  # 0 up to rounding (ChessBench's own pass uses a fused attention kernel)


def test_head_patch_from_the_clean_pass_is_the_clean_pass(lens):
    clean = _clean(lens)
    heads = torch.tensor([[True, False, True, True]])
    source = lens.capture_heads(clean, 1)
    patched = _run(lens, clean, patches=[HeadPatch(1, source, heads)])
    assert torch.equal(patched.logits, _run(lens, clean).logits)


def test_patched_heads_come_from_the_corrupted_pass_and_the_others_stay_clean(lens):
    clean = _clean(lens)
    corrupted = lens.aligned(lens.prepare(chess.Board(CORRUPTED)), clean)
    source = lens.capture_heads(corrupted, 1)
    heads = torch.tensor([[True, False, False, True], [True, True, True, True]])
    _, projection = lens.head_modules(1)
    kept = []
    with torch.no_grad():
        # a forward hook sees the input the projection ran on, after the patch's pre-hook
        handle = projection.register_forward_hook(lambda _m, args, _out: kept.append(args[0]))
        out = lens.run(clean, variants=2, patches=[HeadPatch(1, source, heads)])[1]
        handle.remove()
        kept.append(lens.capture_heads(clean, 1))
    H = lens.units["head"].per_layer
    rows = source.shape[0]
    patched = kept[0].unflatten(-1, (H, -1)).unflatten(0, (2, rows))
    clean_heads, corrupted_heads = kept[1].unflatten(-1, (H, -1)), source.unflatten(-1, (H, -1))
    for v in range(2):
        for h in range(H):
            if heads[v, h]:  # copied bit for bit
                assert torch.equal(patched[v, :, :, h], corrupted_heads[:, :, h]), (v, h)
            else:  # computed in a batch of 2 variants, the reference in a batch of 1: equal up to rounding
                assert torch.allclose(patched[v, :, :, h], clean_heads[:, :, h], atol=1e-6), (v, h)
    assert not torch.allclose(out.logits[0], out.logits[1])


def test_a_family_without_heads_says_why():
    maia = NETS["lc0-resnet"](None)
    for capability in ("head_patch", "attention_zero"):
        assert "no attention heads" in maia.why_not(capability)
    with pytest.raises(ValueError, match="no attention heads"):
        maia.run(maia.prepare(chess.Board()), patches=[AttentionZero(0, 0, torch.zeros(1, 64, 64, dtype=torch.bool))])
    gateau = NETS["alphagateau"](None)
    assert "edges" in gateau.why_not("attention_zero") and "projection" in gateau.why_not("head_patch")
