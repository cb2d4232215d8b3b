"""The decision timeline read from an evaluator's own batched pass equals what ``python -m analysis
lens`` says for each position (cf-small, the retired cb-cpu, a synthetic lc0 attention net, ag-cpu, Maia); a family
whose lens cannot read that pass (Giraffe), and a position with no move, say why."""

from __future__ import annotations

import json
from dataclasses import replace

import chess
import pytest
import torch

from analysis.checkpoint import load_evaluator
from analysis.cli import main
from analysis.lens.decisions import for_ply, move_ranks, settles
from analysis.lens.timeline import TimelineRecorder, ranks_table
from analysis.models.lc0.config import AttentionConfig
from tests.conftest import ROOT, weights_file
from tests.lc0_random_nets import write_net

FENS = ["r3k2r/ppp2ppp/2n1bn2/3qp3/3P4/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9",
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"]
SYNTH = AttentionConfig(encoders=2, embed=32, heads=4, d_model=32, ffn=48, dense_features=8, embedding_ffn=48,
                        gates=True, smolgen_compress=4, smolgen_hidden=16, smolgen_gen=8, policy_embed=24,
                        policy_dim=16, shared_policy_embedding=True, value_channels=8, moves_left_channels=8,
                        moves_left_hidden=32, input_format=1)


def _cli_lens(capsys, model: str, fen: str, moves: list[str] = ()) -> dict:
    """The command line's logit lens (``lens`` of its JSON: curves of up to 4 ``moves``)."""
    assert main(["lens", "--model", model, "--fen", fen, "--json", *(["--moves", *moves] if moves else [])]) == 0
    return json.loads(capsys.readouterr().out)["lens"]


def _every_rank(model: str, board: chess.Board) -> dict[str, list[int]]:
    """Every legal move's rank per readout point, from the logit lens the command line answers with."""
    from analysis.lens import core, lens_for

    evaluator = load_evaluator(model, device="cpu")
    view = core.logit_lens(lens_for(evaluator.model, evaluator.encoding), board)
    return {uci: view.ranks[:, m].tolist() for m, uci in enumerate(view.moves)}


def _recorded(model: str, boards: list[chess.Board]) -> list[dict]:
    evaluator = load_evaluator(model, device="cpu")
    recorder = TimelineRecorder.for_model(evaluator.model, evaluator.encoding)
    assert recorder.why is None
    with recorder.recording() as store:
        evaluations = evaluator.evaluate(boards)  # one batch: the evaluation's own forward pass
    timelines = recorder.timelines(boards, store)
    for evaluation, timeline in zip(evaluations, timelines):
        assert timeline["final"] == evaluation.best_move().uci()
    return timelines


@pytest.fixture(scope="module")
def lc0_net(tmp_path_factory):
    return str(write_net(tmp_path_factory.mktemp("lc0") / "synth.pb.gz", SYNTH, seed=5))


@pytest.mark.parametrize("name", ["cf-small", "cb-cpu", "lc0-synth", "ag-cpu", "maia-1100"])
def test_the_timeline_of_the_evaluation_pass_is_the_cli_logit_lens(capsys, name, request):
    model = request.getfixturevalue("lc0_net") if name == "lc0-synth" else str(weights_file(name))
    boards = [chess.Board(fen) for fen in FENS]
    for board, timeline in zip(boards, _recorded(model, boards)):
        ranks = _every_rank(model, board)
        other = next(uci for uci in ranks if uci != timeline["final"])
        lens = _cli_lens(capsys, model, board.fen(), [timeline["final"], other])
        assert timeline["readouts"] == lens["readouts"]
        assert {uci: [point["rank"] for point in points] for uci, points in lens["curves"].items()} == {
            uci: ranks[uci] for uci in (timeline["final"], other)}
        # Read back from the output only as far as final_from needs (the point before it) where the
        # family reads one point of many positions at once; the others read every point.
        read_from = max(timeline["final_from"] - 1, 0) if name in ("cf-small", "lc0-synth", "maia-1100") else 0
        assert timeline["ranks_from"] == read_from and set(timeline["moves"]) == set(ranks)
        assert {uci: move_ranks(timeline, uci) for uci in timeline["moves"]} == {
            uci: [None] * read_from + r[read_from:] for uci, r in ranks.items()}
        assert timeline["final"] == lens["top"][-1]
        assert timeline["final_from"] == settles(ranks[lens["top"][-1]])
        assert lens["top"][timeline["final_from"]:] == [timeline["final"]] * (len(lens["top"]) - timeline["final_from"])
        if timeline["final_from"] > 0:
            assert lens["top"][timeline["final_from"] - 1] != timeline["final"]
        ply = for_ply(timeline, other)
        assert ply["played"] == other and ply["played_from"] is None
        assert ply["played_ranks"] == [None] * read_from + ranks[other][read_from:]
        assert for_ply(timeline, timeline["final"])["played_from"] == timeline["final_from"]
        earlier = {k: v for k, v in timeline.items() if k not in ("moves", "ranks_from")}  # the first stored form
        earlier["ranks"] = ranks
        assert for_ply(earlier, other)["played_ranks"] == ranks[other]


def test_no_move_and_no_capability_say_why():
    evaluator = load_evaluator(str(ROOT / "weights" / "cf-small.safetensors"), device="cpu")
    recorder = TimelineRecorder.for_model(evaluator.model, evaluator.encoding)
    boards = [chess.Board(), chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")]
    with recorder.recording() as store:
        evaluator.evaluate(boards)
    first, mated = recorder.timelines(boards, store)
    assert first["final"] and mated == {"why": "the game is over here: no move to settle on"}
    assert for_ply(mated, None) == mated

    giraffe = load_evaluator(str(ROOT / "weights" / "giraffe.safetensors"), device="cpu")
    recorder = TimelineRecorder.for_model(giraffe.model, giraffe.encoding)
    assert "one readout point" in recorder.why
    with recorder.recording() as store:
        giraffe.evaluate(boards[:1])
    assert recorder.timelines(boards[:1], store) == [{"why": recorder.why}]


def test_a_forward_run_in_chunks_gives_the_same_timelines():
    evaluator = load_evaluator(str(ROOT / "weights" / "cf-small.safetensors"), device="cpu")
    recorder = TimelineRecorder.for_model(evaluator.model, evaluator.encoding)
    boards = [chess.Board(fen) for fen in FENS] + [chess.Board()]
    with recorder.recording() as store:
        evaluator.evaluate(boards)
    whole = recorder.timelines(boards, store)
    evaluator.model.CPU_INFERENCE_CHUNK = 1  # the CPU path now runs one position per chunk
    with recorder.recording() as store:
        evaluator.evaluate(boards)
    assert len(store) == len(boards) * len(recorder.adapter.readouts)
    assert recorder.timelines(boards, store) == whole


PROMOTIONS = ["8/1P4k1/8/8/8/8/6K1/2r5 w - - 0 1", "2R5/6k1/8/8/8/8/1p4K1/8 b - - 0 1",
              "r3k2r/pPpp1ppp/8/4pP2/8/8/PPPPP1pP/R3K2R w KQkq e6 0 2",
              # a king on files a-d without castling: a canonical lc0 format transforms the board
              "8/1P6/8/8/8/8/1K4k1/8 w - - 0 1", "8/8/8/3k4/8/8/2K5/7R w - - 0 1"]


@pytest.fixture(scope="module")
def lc0_canonical_net(tmp_path_factory):
    """A synthetic lc0 attention net in a canonical input format (the board is transformed)."""
    return str(write_net(tmp_path_factory.mktemp("lc0") / "canonical.pb.gz", replace(SYNTH, input_format=3), seed=7))


@pytest.mark.parametrize("name", ["cf-small", "cb-cpu", "ag-cpu", "maia-1100", "lc0-synth", "lc0-canonical"])
@torch.inference_mode()
def test_one_point_of_many_positions_reads_as_the_full_heads(name, request):
    """``move_logits`` (cf-small: only the legal moves' entries; lc0: one call of the policy head)
    gives each position's logits as the full heads do, promotions (both colours) included, with
    the same ranks."""
    fixture = {"lc0-synth": "lc0_net", "lc0-canonical": "lc0_canonical_net"}.get(name)
    model = request.getfixturevalue(fixture) if fixture else str(weights_file(name))
    evaluator = load_evaluator(model, device="cpu")
    recorder = TimelineRecorder.for_model(evaluator.model, evaluator.encoding)
    adapter = recorder.adapter
    boards = [chess.Board(fen) for fen in FENS + PROMOTIONS]
    with recorder.recording() as store:
        evaluator.evaluate(boards)
    prepared, rows = zip(*(adapter.timeline_prepare(board) for board in boards))
    full = [adapter.prepare(board) for board in boards]
    for r in (0, 1, len(adapter.readouts) - 1):
        read = adapter.move_logits(prepared, store[r], rows)
        at = 0
        for p, n, logits in zip(full, rows, read):
            expected = adapter.unembed(p, store[r][at:at + n], None).logits[0]
            at += n
            assert torch.allclose(logits, expected.float(), rtol=1e-5, atol=1e-5)
            assert (ranks_table([logits], [len(p.moves)]) == ranks_table([expected], [len(p.moves)])).all()
