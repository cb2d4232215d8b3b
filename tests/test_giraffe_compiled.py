"""The compiled Giraffe path (numba) against the reference: features, both networks, the search."""

import copy
import random
from pathlib import Path

import chess
import numpy as np
import pytest
import torch

from analysis.encoding.giraffe import encode
from analysis.encoding.giraffe.compiled import board_features_compiled
from analysis.encoding.giraffe.features import FEATURE_NAMES, board_features
from analysis.evaluator import ForwardingEvaluator
from analysis.models.inference import make_evaluator
from analysis.models import get_family
from analysis.models.giraffe.compiled import CompiledGiraffe
from analysis.train.giraffe.value_evaluator import GiraffeValueEvaluator
from analysis.search import Budget
from analysis.search.probability import ProbabilitySearch, ProbabilitySettings

STS = Path(__file__).resolve().parents[2] / "shared" / "data" / "suites" / "sts_v3.epd"
FAMILY = get_family("giraffe")
# Positions the STS suite lacks: promotions past the slots, castling rights of one side, en
# passant, a lone king, nine pawns (python-chess accepts it).
ODD = ["4k3/8/8/8/8/8/8/QQQ1K3 w - - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 0 1",
       "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "8/8/8/8/8/8/8/K6k w - - 0 1",
       "4k3/8/8/8/8/8/PPPPPPPP/4K1NP w - - 0 1", "1bb1k3/8/8/8/8/8/8/2B1KBB1 w - - 0 1",
       "4k3/8/8/8/8/8/8/NNN1KRRR b - - 0 1"]


def sts_boards() -> list[chess.Board]:
    return [chess.Board(" ".join(line.split()[:4]) + " 0 1") for line in STS.read_text().splitlines() if line]


def game_boards(games: int = 40, seed: int = 1) -> list[chess.Board]:
    """Positions along random games: promotions, bare kings and lost castling rights show up."""
    rng, out = random.Random(seed), []
    for _ in range(games):
        board = chess.Board()
        for _ in range(rng.randrange(20, 240)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            out.append(board.copy(stack=False))
    return out


def model(seed: int = 0, scale: float = 3.0):
    torch.manual_seed(seed)
    net = FAMILY.build(FAMILY.preset("giraffe-2015")).eval()
    with torch.no_grad():  # larger weights than the initialisation's, so the outputs spread
        for p in net.parameters():
            p.mul_(scale)
    return net


def test_features_equal_the_reference():
    boards = sts_boards() + game_boards() + [chess.Board(f) for f in ODD]
    assert len(boards) > 3000
    for board in boards:
        ref, fast = board_features(board), board_features_compiled(board)
        if not np.array_equal(ref, fast):
            wrong = [FEATURE_NAMES[i] for i in np.nonzero(ref != fast)[0][:5]]
            pytest.fail(f"{board.fen()}: {wrong}")


def test_networks_equal_torch():
    """Against torch in float64, as the compiled path computes: in float32 the random network's
    near-tied first-pass logits can sort the other way, and two moves swap their rank features."""
    net = model()
    compiled = CompiledGiraffe(net)
    boards = sts_boards()[::10] + game_boards(8)[::7] + [chess.Board(f) for f in ODD]
    with torch.no_grad():
        out = copy.deepcopy(net).double()(torch.from_numpy(encode(boards)).double())
    for i, board in enumerate(boards):
        moves = list(board.legal_moves)
        value, logits = compiled.value_and_logits(board, moves)
        assert value == pytest.approx(out["value"][i].item(), abs=1e-5)
        assert compiled.value(board) == value
        np.testing.assert_allclose(logits, out["policy"][i, :len(moves)].numpy(), atol=1e-4)


def test_cpu_evaluator_answers_as_the_torch_decode():
    net = model(seed=1)
    evaluator = make_evaluator(net, device="cpu")
    assert evaluator.value_only is not None
    boards = [chess.Board(f) for f in ODD[:4]] + sts_boards()[:20]
    with torch.no_grad():
        out = {k: v.numpy() for k, v in net(torch.from_numpy(encode(boards))).items()}
    reference = FAMILY.decode(out, boards, evaluator.encoding)
    for fast, ref in zip(evaluator.evaluate(boards), reference):
        assert fast.score == pytest.approx(ref.score, abs=1e-5)
        assert set(fast.policy) == set(ref.policy)
        for move, p in ref.policy.items():
            assert fast.policy[move] == pytest.approx(p, abs=1e-4)


def test_changed_weights_are_read_again():
    """An optimiser step (in place) reaches an evaluator made before it, as with torch."""
    net = model(scale=1.0)
    evaluator = GiraffeValueEvaluator(net)
    board = chess.Board(ODD[2])
    before = evaluator.value_only(board)
    with torch.no_grad():
        net.evaluator.out.bias += 0.5
        expected = net.evaluator(torch.from_numpy(board_features(board))[None]).item()
    assert abs(expected - before) > 1e-3
    assert evaluator.value_only(board) == pytest.approx(expected, abs=1e-5)


class WithoutValueOnly(ForwardingEvaluator):
    """The same evaluator, seen by a search as one without a value-only path."""

    value_only = None


def test_value_only_leaves_the_search_unchanged():
    evaluator = make_evaluator(model(seed=2, scale=1.0), device="cpu")
    settings = ProbabilitySettings(batch_successors=False)
    for fen in (chess.STARTING_FEN, "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"):
        fast = ProbabilitySearch(evaluator, settings).run(chess.Board(fen), Budget(nodes=1500))
        full = ProbabilitySearch(WithoutValueOnly(evaluator), settings).run(chess.Board(fen), Budget(nodes=1500))
        assert (fast.best_move, fast.pv, fast.nodes) == (full.best_move, full.pv, full.nodes)
        assert fast.score == pytest.approx(full.score, abs=1e-9)
