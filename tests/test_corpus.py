"""The position corpus (analysis.corpus): a tiny build is bit-for-bit reproducible, resumes where it
stopped, holds each position once and no held-out one, and its labels are Stockfish's at its budget."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import chess
import chess.polyglot
import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.conftest import require_shared_data, require_stockfish

# A position of Philidor.pgn's first game (after 4.d4): a suite that holds it must keep it out.
HELD_OUT_MOVES = "e2e4 e7e5 f1c4 f8c5 c2c3 g8f6 d2d4"


def _board(moves: str) -> chess.Board:
    board = chess.Board()
    for uci in moves.split():
        board.push_uci(uci)
    return board


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(config, corpus built by 2 workers in one go, corpus built by 1 worker stopped after a shard and rerun)."""
    from analysis.corpus.build import RunLimits, build_corpus
    from analysis.corpus.config import CorpusConfig

    stockfish = require_stockfish()
    data = require_shared_data()
    root = tmp_path_factory.mktemp("corpus")
    suite = root / "extra.epd"
    suite.write_text(_board(HELD_OUT_MOVES).epd() + ' id "test";\n')
    cfg = CorpusConfig(seed=3, nodes=100, top_k=3, games_per_maia=2, masters_per_shard=1, max_plies=24,
                       pgn_files=(data / "pgn" / "Philidor.pgn",),
                       puzzle_files=tuple(sorted((data / "puzzles").glob("*.csv"))),
                       suite_files=(*sorted((data / "suites").glob("*.epd")), suite))
    whole, resumed = root / "whole", root / "resumed"
    build_corpus(whole, cfg, RunLimits(max_shards=2, workers=2), stockfish=stockfish, log=lambda _: None)
    build_corpus(resumed, cfg, RunLimits(max_shards=1), stockfish=stockfish, log=lambda _: None)
    first = (resumed / "shards" / "shard-00000.parquet").stat()
    build_corpus(resumed, cfg, RunLimits(max_shards=2), stockfish=stockfish, log=lambda _: None)
    assert (resumed / "shards" / "shard-00000.parquet").stat().st_mtime_ns == first.st_mtime_ns  # never rewritten
    return cfg, whole, resumed, stockfish


def _digests(root: Path) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((root / "shards").glob("*.parquet"))]


def test_a_resumed_build_on_one_worker_writes_the_same_bytes_as_one_run_on_two(tiny):
    _, whole, resumed, _ = tiny
    assert len(_digests(whole)) == 2
    assert _digests(whole) == _digests(resumed)
    assert not list((whole / "shards").glob("*.tmp"))


def test_every_position_is_there_once_and_no_held_out_one(tiny):
    """Once overall, or once per game before ``opening_plies``; never a held-out one."""
    from analysis.data.corpus_files import read_corpus
    from analysis.data.held_out import held_out_zobrist

    cfg, whole, _, _ = tiny
    table = read_corpus(whole)
    keys = table["key"].to_pylist()
    later = [r["key"] for r in table.to_pylist() if r["ply"] >= cfg.opening_plies]
    first = [(r["game_id"], r["key"]) for r in table.to_pylist() if r["ply"] < cfg.opening_plies]
    assert len(later) == len(set(later)) and len(first) == len(set(first))  # the first plies once per game
    assert not set(later) & {key for _, key in first}
    assert keys == [chess.polyglot.zobrist_hash(chess.Board(f)) for f in table["fen"].to_pylist()]
    assert not set(keys) & held_out_zobrist(cfg.puzzle_files, cfg.suite_files)
    held = chess.polyglot.zobrist_hash(_board(HELD_OUT_MOVES))
    plies = {r["ply"] for r in table.to_pylist() if r["game_id"] == "master:Philidor:0"}
    assert held not in keys and 7 not in plies and {6, 8} <= plies  # only the held-out ply is missing
    assert set(table["source"].to_pylist()) == {"master", "maia-1100", "maia-1500", "maia-1900"}


def test_the_start_position_is_there_once_per_game_with_one_label(tiny):
    """Every game, master or self-play, contributes its first plies with their real (short) history,
    so the empty history planes of the start position are seen as often as games start."""
    from analysis.data.corpus_files import read_corpus

    _, whole, _, _ = tiny
    rows = read_corpus(whole).to_pylist()
    games = {r["game_id"] for r in rows}
    starts = [r for r in rows if r["ply"] == 0]
    assert len(games) == 2 * (1 + 3 * 2) and len(starts) == len(games)  # 2 shards: 1 master, 3 Maias x 2 games
    assert {r["fen"] for r in starts} == {chess.STARTING_FEN}
    assert len({(r["win"], r["best_move"], tuple(r["top_moves"])) for r in starts}) == 1
    assert {r["ply"] for r in rows if r["source"] != "master"} >= {0, 1, 2, 3}


def test_the_schema_and_the_labels_are_stockfish_at_the_budget(tiny):
    from analysis.corpus.label import Labeller
    from analysis.data.corpus_files import read_corpus
    from analysis.corpus.shard import SCHEMA
    from analysis.data.sources import PositionSource

    cfg, whole, _, stockfish = tiny
    assert pq.read_schema(whole / "shards" / "shard-00000.parquet").remove_metadata() == SCHEMA
    rows = read_corpus(whole).to_pylist()
    labeller = Labeller(stockfish, nodes=cfg.nodes, top_k=cfg.top_k, hash_mb=cfg.hash_mb)
    try:
        for row in random.Random(0).sample(rows, 8):
            board = PositionSource(row["fen"], row["history_fen"], row["history_moves"], row["game_id"], row["ply"],
                                   row["source"]).board()
            labels = labeller.label(board)
            assert (row["best_move"], row["top_moves"]) == (labels.best_move, labels.top_moves)
            assert row["win"] == pytest.approx(labels.win, abs=1e-6)
            assert row["top_win"] == pytest.approx(labels.top_win, abs=1e-6)
    finally:
        labeller.close()
    for row in rows:
        assert row["top_moves"][0] == row["best_move"] and 1 <= len(row["top_moves"]) <= cfg.top_k
        assert row["split"] in {"train", "test"} and (row["opening"] is None) == (row["source"] == "master")


def test_the_training_loop_reads_it(tiny):
    from analysis.corpus.reader import read_as_annotated
    from analysis.data.store import ANNOTATED_SCHEMA

    _, whole, _, _ = tiny
    table = read_as_annotated(whole)
    assert table.schema == ANNOTATED_SCHEMA and table.num_rows > 100
    row = table.slice(0, 1).to_pylist()[0]
    assert row["best_index"] == row["action_indices"][0] and row["best_index"] in row["legal_indices"]


def test_a_rerun_with_another_recipe_is_refused(tiny):
    from dataclasses import replace

    from analysis.corpus.build import RecipeMismatch, RunLimits, build_corpus

    cfg, whole, _, stockfish = tiny
    with pytest.raises(RecipeMismatch, match="nodes"):
        build_corpus(whole, replace(cfg, nodes=cfg.nodes + 1), RunLimits(max_shards=3), stockfish=stockfish,
                     log=lambda _: None)


def test_status_counts_what_is_on_disk(tiny):
    from analysis.corpus.build import corpus_status

    _, whole, _, _ = tiny
    status = corpus_status(whole)
    assert status["shards"] == 2 and status["card_agrees"]
    assert sum(status["by_source"].values()) == status["rows"] > status["positions"]
    assert status["dropped"]["held_out"] >= 1


def test_the_position_dataset_takes_a_corpus_directory(tiny):
    from analysis.train.dataset import PositionDataset

    _, whole, _, _ = tiny
    dataset = PositionDataset(whole, "train")
    batch = dataset[[0, 1, 2]]
    assert batch["policy"].sum(dim=1).allclose(batch["policy"].new_ones(3))
    assert (batch["legal"] | (batch["policy"] == 0)).all()


def test_training_on_it_resumes_bit_identically(tiny, tmp_path):
    """A run stopped at step 2 and resumed to 4 ends with the very weights of a run that went straight
    to 4 (the batches, augmentation and optimiser state all come back), on the Shaw encoding and with
    the history dropout and colour flips of configs/cf-corpus.toml."""
    import torch

    from analysis.checkpoint import load_checkpoint
    from analysis.train.config import TrainConfig
    from analysis.train.loop import train

    _, whole, _, _ = tiny

    def config(out: Path, steps: int) -> TrainConfig:
        return TrainConfig(data=whole, out=out, model="cf-tiny", steps=steps, batch_size=8, checkpoint_every=1,
                           log_every=1, val_every=2, val_batches=1, num_workers=0, threads=1, seed=5,
                           swa_start=1, swa_every=1, fen_only_share=0.2, colour_flip_share=0.5, wdl_target="win",
                           lr_steps=[[0, 1e-3], [3, 3e-4]], snapshot_every=2)

    straight, _ = load_checkpoint(train(config(tmp_path / "straight", 4), progress=False))
    train(config(tmp_path / "stopped", 2), progress=False)
    resumed, meta = load_checkpoint(train(config(tmp_path / "stopped", 4), progress=False))
    assert meta.provenance["steps"] == 4
    for name, tensor in straight.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], tensor), name
    # The learning curve's snapshots: one every 2 steps, the last one the export itself.
    snapshots = sorted((tmp_path / "straight" / "snapshots").glob("*.safetensors"))
    assert [p.name for p in snapshots] == ["step-000002.safetensors", "step-000004.safetensors"]
    last, last_meta = load_checkpoint(snapshots[-1])
    assert last_meta.provenance["positions_seen"] == 4 * 8 and last_meta.provenance["averaged"]
    assert all(torch.equal(last.state_dict()[k], v) for k, v in straight.state_dict().items())


def test_the_learning_curve_reads_a_runs_snapshots(tiny, tmp_path, capsys):
    """Puzzles against positions seen, one point per snapshot after the start network's, and a picture."""
    import json

    from analysis.eval.learning_curve import main as curve_main
    from analysis.train.config import TrainConfig
    from analysis.train.loop import train
    from tests.conftest import require_shared_data

    _, whole, _, _ = tiny
    start = tmp_path / "start.safetensors"
    train(TrainConfig(data=whole, out=tmp_path / "start", export=start, model="cf-tiny", steps=1, batch_size=4,
                      num_workers=0, threads=1), progress=False)
    run = tmp_path / "run"
    train(TrainConfig(data=whole, out=run, model="cf-tiny", steps=2, batch_size=4, num_workers=0, threads=1,
                      init_from=start, snapshot_every=1), progress=False)
    puzzles = require_shared_data() / "puzzles" / "lichess_puzzles_1000.csv"
    picture = tmp_path / "curve.png"
    assert curve_main(["--run", str(run), "--csv", str(puzzles), "--limit", "5", "--start", str(start),
                       "--target", "0.3", "--plot", str(picture), "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert [p["positions_seen"] for p in points] == [0, 4, 8] and all(p["total"] == 5 for p in points)
    assert all(p["ci95"][0] <= p["accuracy"] <= p["ci95"][1] for p in points)
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert curve_main(["--run", str(tmp_path / "start"), "--csv", str(puzzles)]) == 2  # no snapshots there
    assert "snapshot_every" in capsys.readouterr().err


def _python_chess_labels(engine, board: chess.Board, nodes: int, top_k: int):
    """The labels as python-chess's analyse gives them (the labeller's reference)."""
    import chess.engine

    from analysis.engines.scores import win_probability

    lines = [line for line in engine.analyse(board, chess.engine.Limit(nodes=nodes), multipv=top_k, game=object())
             if line.get("pv")]
    pov = lines[0]["score"].pov(board.turn)
    wdl = lines[0].get("wdl")
    return (lines[0]["pv"][0].uci(), win_probability(lines[0]["score"], board.turn), pov.score(), pov.mate(),
            tuple(wdl.pov(board.turn)) if wdl is not None else None, [line["pv"][0].uci() for line in lines],
            [win_probability(line["score"], board.turn) for line in lines])


def test_the_labeller_gives_python_chess_labels_exactly(tiny):
    """The bare UCI pipe (analysis.corpus.uci) sends what python-chess sends and reads what it reads: equal
    labels on corpus positions with their histories, a mate for the mover, a mate against and an en passant."""
    from analysis.corpus.label import Labeller
    from analysis.data.corpus_files import read_corpus
    from analysis.data.sources import PositionSource
    from analysis.engines.stockfish import open_stockfish

    _, whole, _, stockfish = tiny
    rows = random.Random(1).sample(read_corpus(whole).to_pylist(), 12)
    boards = [PositionSource(r["fen"], r["history_fen"], r["history_moves"], r["game_id"], r["ply"], r["source"]).board()
              for r in rows]
    boards += [chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),  # mate in one for the mover
               chess.Board("3r2k1/5ppp/8/8/8/8/5PPP/6K1 w - - 0 1"),  # mated in one
               _board("e2e4 a7a6 e4e5 d7d5")]  # en passant on d6, in the history sent
    for nodes, top_k in ((2000, 3), (300, 1)):
        labeller = Labeller(stockfish, nodes=nodes, top_k=top_k, hash_mb=4)
        engine = open_stockfish(stockfish, threads=1, hash_mb=4)
        try:
            for board in boards:
                got = labeller.label(board)
                assert (got.best_move, got.win, got.cp, got.mate, got.wdl, got.top_moves, got.top_win) == \
                    _python_chess_labels(engine, board, nodes, top_k), board.fen()
        finally:
            labeller.close()
            engine.quit()


def test_value_quality_reads_a_corpus(tiny):
    from analysis.data.corpus_files import read_corpus
    from analysis.eval.value_quality import load_value_samples

    _, whole, _, _ = tiny
    samples = load_value_samples(whole, "train", limit=20)
    rows = read_corpus(whole, split="train").slice(0, 20).to_pylist()
    assert [b.fen() for b in samples.boards] == [r["fen"] for r in rows]
    assert samples.target.tolist() == pytest.approx([r["win"] for r in rows])
    assert len(samples.boards[-1].move_stack) >= 1  # with the history the corpus keeps


@pytest.fixture(scope="module")
def tiny_dataset_dir(tmp_path_factory) -> Path:
    """A tiny annotated dataset (analysis.data: generate, annotate), written through Parquet's own list type."""
    from analysis.data.annotate import AnnotateConfig, annotate_dataset
    from analysis.data.plan import GenerateConfig, build_plan
    from analysis.engines.limit import EngineLimit

    require_stockfish()
    root = tmp_path_factory.mktemp("dataset")
    build_plan(GenerateConfig(pgn_files=[require_shared_data("pgn/Philidor.pgn")], perturb_share=0.0, test_share=0.3,
                              workers=1, seed=1), root)
    annotate_dataset(root, AnnotateConfig(limit=EngineLimit(depth=2), multipv_share=0.5, workers=1, shard_size=16,
                                          max_positions=16), progress=False)
    return root


def test_a_corpus_and_an_annotated_dataset_train_together(tiny, tiny_dataset_dir):
    """configs/cf-corpus.toml's data: the corpus beside an annotated dataset (their Parquet list types differ)."""
    from analysis.train.dataset import PositionDataset

    _, whole, _, _ = tiny
    alone = PositionDataset(whole, "train")
    both = PositionDataset([whole, tiny_dataset_dir, tiny_dataset_dir], "train")
    extra = PositionDataset(tiny_dataset_dir, "train")
    assert len(both) == len(alone) + 2 * len(extra)
    assert (both[[len(alone)]]["policy"] == extra[[0]]["policy"]).all()


def test_a_chessbench_state_value_net_reads_a_corpus_beside_a_dataset(tiny, tiny_dataset_dir):
    """ChessBench's state-value rows are the corpus's positions and win probabilities; an action-value
    head is refused there (the corpus values only Stockfish's top moves), with a message."""
    from analysis.data.corpus_files import read_corpus
    from analysis.models.chessbench.config import PRESETS
    from analysis.models.chessbench.data import ChessBenchDataset

    _, whole, _, _ = tiny
    sv = PRESETS["cb-9m-sv"]
    alone = ChessBenchDataset([whole], "train", sv)
    rows = read_corpus(whole, split="train")
    assert alone.fens == rows["fen"].to_pylist()
    assert alone[np.arange(len(alone))]["win"].tolist() == pytest.approx(rows["win"].to_pylist())
    both = ChessBenchDataset([whole, tiny_dataset_dir], "train", sv)
    assert len(both) == len(alone) + len(ChessBenchDataset([tiny_dataset_dir], "train", sv))
    with pytest.raises(ValueError, match="state-value"):
        ChessBenchDataset([whole], "train", PRESETS["cb-tiny"])


def test_a_corpus_gives_chessbench_its_top_moves_children_as_state_value_samples(tiny, tiny_dataset_dir):
    """``corpus_children = k``: after the rows (corpus and dataset alike, in order), the position after
    each corpus row's top k moves, valued 1 - the move's win probability; a dataset row has none."""
    from analysis.data.corpus_files import read_corpus
    from analysis.models.chessbench.config import PRESETS
    from analysis.models.chessbench.data import ChessBenchDataset

    _, whole, _, _ = tiny
    sv = PRESETS["cb-9m-sv"]
    rows = read_corpus(whole, split="train").to_pylist()
    plain = ChessBenchDataset([whole, tiny_dataset_dir], "train", sv)
    with_children = ChessBenchDataset([whole, tiny_dataset_dir], "train", sv, corpus_children=2)
    expected_fens, expected_wins = [], []
    for row in rows:
        for move, win in list(zip(row["top_moves"], row["top_win"]))[:2]:
            board = chess.Board(row["fen"])
            board.push_uci(move)
            expected_fens.append(board.fen())
            expected_wins.append(1 - win)
    assert len(expected_fens) > len(rows)  # most rows have two lines or more
    assert with_children.fens == plain.fens + expected_fens
    values = with_children[np.arange(len(with_children))]["win"].tolist()
    assert values[len(plain):] == pytest.approx(expected_wins, abs=1e-6)
    capped = ChessBenchDataset([whole], "train", sv, corpus_children=1, max_rows=3)
    assert len(capped) == 3 + sum(min(1, len(r["top_moves"])) for r in rows[:3])  # the cap counts corpus rows


def test_corpus_children_are_for_state_value_only():
    from analysis.models.chessbench.config import PRESETS
    from analysis.models.chessbench.data import ChessBenchDataset
    from analysis.train.config import TrainConfig
    from analysis.train.loop import training_dataset

    from analysis.models.alphagateau.data import make_dataset as alphagateau_dataset

    with pytest.raises(ValueError, match="state value only"):
        ChessBenchDataset([Path("unused")], "train", PRESETS["cb-tiny"], corpus_children=3)
    with pytest.raises(ValueError, match="AlphaGateau trains a policy"):
        alphagateau_dataset([Path("unused")], "train", None, corpus_children=3)
    lc0_planes = type("Family", (), {"dataset": None})()
    with pytest.raises(ValueError, match="lc0-plane loader"):
        training_dataset(lc0_planes, TrainConfig(data=Path("unused"), out=Path("unused"), corpus_children=3),
                         "train", None)
    with pytest.raises(ValueError, match="corpus_children must be"):
        TrainConfig(data=Path("unused"), out=Path("unused"), corpus_children=-1).validate()
