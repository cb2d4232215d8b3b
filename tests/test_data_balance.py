"""What the training data must contain for trustworthy values (issue: side-to-move bias)."""

import numpy as np
import pytest

from tests.conftest import require_shared_data


def test_pgn_positions_start_with_the_games_first_position():
    import chess

    from analysis.data.sources import pgn_positions

    pgn = require_shared_data("pgn/Philidor.pgn")
    first, board = next(iter(pgn_positions([pgn])))
    assert first.ply == 0 and first.history_moves == ""
    assert board.board_fen() == chess.Board().board_fen()
    assert all(source.ply >= 3 for source, _ in pgn_positions([pgn], min_ply=3))


def test_opening_plies_are_kept_once_per_game(tmp_path):
    import pyarrow.parquet as pq

    from analysis.data.plan import GenerateConfig, build_plan

    pgn = require_shared_data("pgn/Philidor.pgn")
    build_plan(GenerateConfig(pgn_files=[pgn], perturb_share=0.0, opening_plies=2, workers=1, seed=0), tmp_path)
    plan = pq.read_table(tmp_path / "plan.parquet").to_pylist()
    games = {r["game_id"] for r in plan}
    starts = [r for r in plan if r["ply"] == 0]
    assert len(starts) == len(games) >= 5  # the start position once per game
    later = [" ".join(r["fen"].split()[:4]) for r in plan if r["ply"] >= 2]
    assert len(later) == len(set(later))  # later plies still deduplicated overall


def test_consistent_wdl_matches_the_win_probability_and_keeps_draws_that_fit():
    from analysis.train.dataset import consistent_wdl

    win = np.array([0.5, 0.9, 0.59, 0.0, 1.0], np.float32)
    sf = np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.45, 0.05], [0, 0, 1], [1, 0, 0]], np.float32)
    out = consistent_wdl(win, sf)
    assert out.sum(1) == pytest.approx(np.ones(5), abs=1e-6)
    assert out[:, 0] + out[:, 1] / 2 == pytest.approx(win, abs=1e-6)
    assert out[0] == pytest.approx([0.0, 1.0, 0.0])  # a dead draw stays a draw
    assert out[1] == pytest.approx([0.8, 0.2, 0.0])  # draw share capped at 2 (1 - win)
    assert out[2] == pytest.approx([0.365, 0.45, 0.185])  # Stockfish's draw share kept
    assert out[3] == pytest.approx([0, 0, 1]) and out[4] == pytest.approx([1, 0, 0])


def test_history_dropout_packs_some_rows_from_their_fen(tmp_path, monkeypatch):
    import chess

    from analysis.encoding import pack
    from analysis.train import dataset as ds

    board = chess.Board()
    for uci in "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6".split():
        board.push_uci(uci)
    with_history = np.frombuffer(pack(board).bits.astype("<u8").tobytes(), np.uint8)
    fen_only = np.frombuffer(pack(chess.Board(board.fen())).bits.astype("<u8").tobytes(), np.uint8)
    assert not np.array_equal(with_history, fen_only)

    data = ds.PositionDataset.__new__(ds.PositionDataset)
    data.planes = np.tile(with_history, (400, 1))
    data.fens = [board.fen()] * 400
    data.seed, data.colour_flip_share = 3, 0.0
    idx = np.arange(400)
    data.fen_only_share = 0.0
    assert all(np.array_equal(p, with_history) for p in data._planes(idx))
    data.fen_only_share = 0.25
    planes = data._planes(idx)
    swapped = [np.array_equal(p, fen_only) for p in planes]
    assert all(s or np.array_equal(p, with_history) for s, p in zip(swapped, planes))
    assert 60 < sum(swapped) < 140
    assert np.array_equal(planes, data._planes(idx))  # the same batch packs the same way
    assert np.array_equal(data.planes[0], with_history)  # the stored planes are untouched


def test_colour_flip_is_the_mirrored_positions_encoding():
    import chess

    from analysis.encoding import pack
    from analysis.train import dataset as ds

    board = chess.Board("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5")
    as_bytes = lambda b: np.frombuffer(pack(b).bits.astype("<u8").tobytes(), np.uint8)  # noqa: E731
    original, mirrored = as_bytes(board), as_bytes(board.mirror())
    data = ds.PositionDataset.__new__(ds.PositionDataset)
    data.planes = np.tile(original, (300, 1))
    data.fens = [board.fen()] * 300
    data.seed, data.fen_only_share, data.colour_flip_share = 0, 0.0, 0.5
    planes = data._planes(np.arange(300))
    flipped = [np.array_equal(p, mirrored) for p in planes]
    assert all(f or np.array_equal(p, original) for f, p in zip(flipped, planes))
    assert 100 < sum(flipped) < 200


def test_mate_in_one_positions_leave_the_mover_a_mate():
    import random

    import chess

    from analysis.data.sources import has_mate_in_one, mate_in_one_positions

    positions = list(mate_in_one_positions(5, random.Random(4)))
    assert len(positions) == 5 and len({p.game_id for p in positions}) == 5
    for source in positions:
        board = source.board()  # the random moves are its history
        assert source.source == "mate-in-one" and board.fen() == source.fen
        assert any(board.is_checkmate() for board in _after_each_move(board))
        assert has_mate_in_one(board)
    assert not has_mate_in_one(chess.Board())


def _after_each_move(board):
    for move in list(board.legal_moves):
        child = board.copy()
        child.push(move)
        yield child


def test_extra_datasets_join_the_run(tmp_path):
    from pathlib import Path

    from analysis.train.config import load_config

    config = tmp_path / "run.toml"
    config.write_text('data = "d/main"\nextra_data = ["d/mates"]\nout = "runs/x"\n')
    cfg = load_config(config)
    assert cfg.datasets == [Path("d/main"), Path("d/mates")]


def test_blunder_mates_follow_real_opening_moves():
    import chess

    from analysis.data.sources import Opening, blunder_mate_positions, has_mate_in_one, opening_parents

    # 1.e4 e5 2.Bc4 Nc6 3.Qh5: Black's 3...Nf6?? (and others) allow Qxf7#.
    line = [chess.Move.from_uci(m) for m in "e2e4 e7e5 f1c4 b8c6 d1h5".split()]
    parents = list(opening_parents([Opening("C23", "Bishop's Opening", line)], [], max_ply=6))
    assert [board.ply() for _, board in parents] == [0, 1, 2, 3, 4, 5]
    positions = list(blunder_mate_positions(parents))
    assert positions and all(p.source == "blunder-mate" for p in positions)
    for source in positions:
        board = source.board()
        assert board.fen() == source.fen and has_mate_in_one(board)
        assert board.move_stack[:-1] == line[: board.ply() - 1]  # a real line plus the blunder
    fens = {chess.Board(p.fen).board_fen() for p in positions}
    assert "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR" in fens  # 3...Nf6??


def test_generated_datasets_never_hold_the_sanity_suites_mates(tmp_path):
    import pyarrow.parquet as pq

    from analysis.data.plan import GenerateConfig, build_plan
    from analysis.data.sources import blunder_mate_positions, eco_openings, opening_parents
    from analysis.data.held_out import held_out_keys

    openings = tmp_path / "openings"
    openings.mkdir()
    # Two ECO lines whose next moves include the suite's own Scholar's and Fool's mates.
    (openings / "a.tsv").write_text("eco\tname\tpgn\nC23\tBishop's\t1. e4 e5 2. Bc4 Nc6 3. Qh5\n"
                                    "A00\tBarnes\t1. f3 e5\n")
    summary = build_plan(GenerateConfig(openings_dir=openings, blunder_mate_plies=6, workers=1), tmp_path / "d")
    plan = pq.read_table(tmp_path / "d" / "plan.parquet").to_pylist()
    keys = {" ".join(r["fen"].split()[:4]) for r in plan}
    assert summary["by_source"]["blunder-mate"] == len(plan) > 0
    assert not keys & held_out_keys()
    unfiltered = blunder_mate_positions(opening_parents(eco_openings(openings), [], 6))
    assert len({" ".join(p.fen.split()[:4]) for p in unfiltered} & held_out_keys()) == 2  # what was dropped


def test_thinned_positions_are_real_positions_with_pieces_removed():
    import random

    import chess

    from analysis.data.sources import thin

    rng = random.Random(3)
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    children = [c for c in (thin(board, rng, "g:1") for _ in range(200)) if c is not None]
    assert len(children) > 150 and {c.source for c in children} == {"thinned"}
    counts = set()
    for child in children:
        after = child.board()
        assert after.is_valid() and not after.is_game_over() and child.history_moves == ""
        assert child.game_id == "g:1"  # the parent's split
        assert after.castling_rights == after.clean_castling_rights() and after.ep_square is None
        kept = after.piece_map()
        # Nothing moved or appeared: every piece left stands where it stood.
        assert all(board.piece_at(sq) == piece for sq, piece in kept.items())
        counts.add(len(board.piece_map()) - len(kept))
    assert min(counts) == 1 and max(counts) == 12


def test_thinned_share_adds_thinned_children_to_the_plan(tmp_path):
    import pyarrow.parquet as pq

    from analysis.data.plan import GenerateConfig, build_plan

    pgn = require_shared_data("pgn/Philidor.pgn")
    summary = build_plan(GenerateConfig(pgn_files=[pgn], perturb_share=0.0, thinned_share=0.5, workers=1, seed=0),
                         tmp_path)
    sources = pq.read_table(tmp_path / "plan.parquet").column("source").to_pylist()
    assert summary["thinned_share"] == 0.5
    assert 0.2 < sources.count("thinned") / sources.count("pgn") < 0.6
    with pytest.raises(ValueError, match="thinned_share"):
        build_plan(GenerateConfig(pgn_files=[pgn], thinned_share=1.5, workers=1), tmp_path)
