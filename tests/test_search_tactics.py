"""Each search finds mates and a winning capture on a small, trustworthy evaluator."""

from __future__ import annotations

import chess
import pytest

from analysis.evaluator import MaterialEvaluator
from analysis.search import Budget, GumbelSettings, make_search, run_search

MATE_IN_1 = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"          # Ra8#
MATE_IN_1_BLACK = "r5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1"    # Ra1#
MATE_IN_2 = "k7/8/2K5/8/8/8/8/7R w - - 0 1"                 # Kb6 Kb8 Rh8# or Kc7 Ka7 Ra1#
HANGING_QUEEN = "rnb1kbnr/ppp1pppp/8/3q4/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 3"  # Nxd5

SEARCHES = ["mcts", "gumbel", "probability", "alphabeta"]
BUDGETS = {"mcts": Budget(nodes=1500), "gumbel": Budget(nodes=1500),
           "probability": Budget(nodes=20_000), "alphabeta": Budget(nodes=20_000)}


def settings_for(name: str):
    # With a uniform prior, Gumbel top-k would consider a random 16 moves; consider them all.
    return GumbelSettings(max_considered_actions=64, seed=0) if name == "gumbel" else None


def mates_in_one(board: chess.Board) -> set[chess.Move]:
    found = set()
    for move in board.legal_moves:
        board.push(move)
        if board.is_checkmate():
            found.add(move)
        board.pop()
    return found


def mates_in_two(board: chess.Board) -> set[chess.Move]:
    """First moves after which every reply allows a mate in one."""
    found = set()
    for move in board.legal_moves:
        board.push(move)
        replies = list(board.legal_moves)
        if replies and not board.is_game_over():
            forced = True
            for reply in replies:
                board.push(reply)
                forced = bool(mates_in_one(board))
                board.pop()
                if not forced:
                    break
            if forced:
                found.add(move)
        board.pop()
    return found


@pytest.mark.parametrize("name", SEARCHES)
@pytest.mark.parametrize("fen", [MATE_IN_1, MATE_IN_1_BLACK])
def test_mate_in_one(name, fen):
    board = chess.Board(fen)
    result = run_search(name, board, MaterialEvaluator(), settings_for(name), budget=BUDGETS[name])
    assert result.best_move in mates_in_one(board)
    assert result.mate == 1
    assert result.score == pytest.approx(1.0)
    assert result.pv[0] == result.best_move


@pytest.mark.parametrize("name", SEARCHES)
def test_mate_in_two(name):
    board = chess.Board(MATE_IN_2)
    solutions = mates_in_two(board)
    assert solutions and not mates_in_one(board)
    result = run_search(name, board, MaterialEvaluator(), settings_for(name), budget=BUDGETS[name])
    assert result.best_move in solutions
    assert result.score > 0.95
    if name in ("probability", "alphabeta"):
        assert result.mate == 2
        line = board.copy()
        for move in result.pv:
            line.push(move)
        assert line.is_checkmate() and len(result.pv) == 3


@pytest.mark.parametrize("name", SEARCHES + ["value"])
def test_winning_capture(name):
    board = chess.Board(HANGING_QUEEN)
    result = run_search(name, board, MaterialEvaluator(), settings_for(name), budget=BUDGETS.get(name))
    assert result.best_move == chess.Move.from_uci("c3d5")
    assert result.score > 0.9
    assert {r.move for r in result.root} == set(board.legal_moves)


def test_value_search_scores_every_move_by_the_successor():
    board = chess.Board(HANGING_QUEEN)
    result = run_search("value", board, MaterialEvaluator())
    assert result.nodes == board.legal_moves.count()
    scores = {r.move: r.score for r in result.root}
    assert scores[chess.Move.from_uci("c3d5")] == pytest.approx(result.score)
    assert scores[chess.Move.from_uci("a2a3")] == pytest.approx(1 - MaterialEvaluator().evaluate(
        [_after(board, "a2a3")])[0].score)


def test_value_search_finds_mate_in_one():
    board = chess.Board(MATE_IN_1)
    result = run_search("value", board, MaterialEvaluator())
    assert result.best_move == chess.Move.from_uci("a1a8") and result.mate == 1


def test_policy_search_needs_a_policy_head():
    with pytest.raises(ValueError, match="policy head"):
        run_search("policy", chess.Board(), MaterialEvaluator())


@pytest.mark.parametrize("name", SEARCHES + ["value"])
def test_no_legal_moves(name):
    mated = chess.Board("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1")
    result = run_search(name, mated, MaterialEvaluator(), settings_for(name), budget=Budget(nodes=50))
    assert result.best_move is None and result.pv == [] and result.score == 0.0


@pytest.mark.parametrize("name", ["mcts", "gumbel"])
def test_tree_searches_report_a_proven_move_by_its_proof(name):
    # Queen moves that mate next move, stalemate, or lose the queen: each root line whose
    # subtree is proven says the proven value and its WDL, not the mean of its visits.
    board = chess.Board("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1")
    search = make_search(name, MaterialEvaluator(), settings_for(name))
    result = search.run(board, Budget(nodes=300))
    stats = {r.move: r for r in result.root}
    proven = {move: child.proven for move, child in zip(search.root.moves, search.root.children)
              if child is not None and child.proven is not None}
    # MCTS stops at its first proof; Gumbel's halving goes on visiting other moves.
    assert len(proven) >= (1 if name == "mcts" else 3) and 1.0 in {-v for v in proven.values()}
    for move, value in proven.items():
        expected = {1.0: (1.0, (1.0, 0.0, 0.0)), 0.0: (0.5, (0.0, 1.0, 0.0)), -1.0: (0.0, (0.0, 0.0, 1.0))}[-value]
        assert (stats[move].q, stats[move].wdl) == expected, move
    best = stats[result.best_move]
    assert result.mate == 1 and (result.score, result.wdl) == (best.q, best.wdl) == (1.0, (1.0, 0.0, 0.0))


@pytest.mark.parametrize("name", ["mcts", "alphabeta"])
def test_repeating_a_position_counts_as_a_draw(name):
    # White is a queen up; after Nc3 Kd8 Nb1 Ke8, playing Nc3 again repeats a position.
    board = chess.Board("4k3/8/8/8/8/8/8/QN2K3 w - - 0 1")
    for uci in ["b1c3", "e8d8", "c3b1", "d8e8"]:
        board.push_uci(uci)
    repeat = chess.Move.from_uci("b1c3")
    result = run_search(name, board, MaterialEvaluator(), budget=Budget(nodes=3000))
    stats = {r.move: r for r in result.root}
    assert result.best_move != repeat and result.score > 0.9
    if name == "mcts":
        assert stats[repeat].q is None or stats[repeat].q == pytest.approx(0.5)
    else:
        assert stats[repeat].score <= 0.5 + 1e-9


def test_untrained_checkpoint_mcts_finds_mate_in_one(tiny_checkpoint):
    from analysis.checkpoint import load_evaluator

    evaluator = load_evaluator(tiny_checkpoint, device="cpu")
    assert evaluator.trained is False
    board = chess.Board(MATE_IN_1)
    result = run_search("mcts", board, evaluator, budget=Budget(nodes=64))
    assert result.best_move == chess.Move.from_uci("a1a8")
    assert result.mate == 1 and result.wdl == (1.0, 0.0, 0.0)


def _after(board: chess.Board, uci: str) -> chess.Board:
    b = board.copy()
    b.push_uci(uci)
    return b


def test_quiescence_moves_are_the_captures_and_queen_promotions():
    """The quiescence move list asked by target squares equals filtering every legal move."""
    import random

    from analysis.search.alphabeta import _captures_and_queen_promotions

    rng = random.Random(3)
    boards = [chess.Board(f) for f in ("4k3/1P6/8/8/8/8/6p1/4K2R w K - 0 1", "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1",
                                       "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")]
    for _ in range(40):
        board = chess.Board()
        for _ in range(rng.randrange(10, 250)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            boards.append(board.copy(stack=False))
    for board in boards:
        expected = [m for m in board.generate_legal_moves() if m.promotion == chess.QUEEN or board.is_capture(m)]
        got = _captures_and_queen_promotions(board)
        assert sorted(got, key=chess.Move.uci) == sorted(expected, key=chess.Move.uci), board.fen()
