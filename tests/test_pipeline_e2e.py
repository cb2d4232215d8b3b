"""A tiny end-to-end run: generate, annotate (Stockfish depth 4), train cf-tiny, export, puzzles, match."""

from pathlib import Path

import chess
import pyarrow.parquet as pq
import pytest

from tests.conftest import require_shared_data, require_stockfish

# The shipped cf-small uses relative-bias positions (Shaw's tables are several
# times slower to train on CPU); the tests train the same kind of network.
FAST = {"position": "relative_bias"}


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory) -> Path:
    require_stockfish()
    pgn = require_shared_data("pgn/Philidor.pgn")
    from analysis.data.annotate import AnnotateConfig, annotate_dataset
    from analysis.engines.limit import EngineLimit
    from analysis.data.plan import GenerateConfig, build_plan

    root = tmp_path_factory.mktemp("dataset")
    summary = build_plan(GenerateConfig(pgn_files=[pgn], perturb_share=0.5, test_share=0.3, workers=1, seed=1), root)
    assert summary["planned_positions"] == summary["unique_positions"] > 30
    annotate_dataset(root, AnnotateConfig(limit=EngineLimit(depth=4), multipv_share=0.5, workers=2, shard_size=16,
                                          max_positions=30), progress=False)
    return root


def test_annotation_rows(tiny_dataset):
    from analysis.data.store import annotated_shards, read_annotated, read_card

    assert len(annotated_shards(tiny_dataset)) == 2  # 16 + 14 plan rows
    table = read_annotated(tiny_dataset)
    rows = table.to_pylist()
    planned = [r for r in rows if r["source"] != "refute"]
    assert len(planned) == 30
    # Every perturbed child is followed by its refutation: the child plus Stockfish's best reply.
    for i, row in enumerate(rows):
        if row["source"] == "perturb":
            child = chess.Board(row["fen"])
            child.push_uci(row["best_move"])
            if not child.is_game_over():
                refutation = rows[i + 1]
                assert refutation["source"] == "refute" and refutation["game_id"] == row["game_id"]
                assert refutation["fen"] == child.fen() and refutation["split"] == row["split"]
    assert any(r["source"] == "refute" for r in rows)
    # Deduplicated, except that a game's opening plies are kept once per game.
    keys = [(r["game_id"] if r["ply"] < 8 and r["source"] == "pgn" else "", " ".join(r["fen"].split()[:4]))
            for r in planned]
    assert len(set(keys)) == 30
    games = {}
    for g, s in zip(table["game_id"].to_pylist(), table["split"].to_pylist()):
        games.setdefault(g, set()).add(s)
    assert all(len(s) == 1 for s in games.values())  # no game on both sides
    for row in rows:
        assert 0.0 <= row["win"] <= 1.0
        assert sum(row["wdl"]) == pytest.approx(1.0, abs=1e-3)
        assert row["best_index"] in row["legal_indices"]
        if row["split"] == "test":
            assert row["action_indices"] and len(row["action_indices"]) == len(row["legal_indices"])
    card = read_card(tiny_dataset)
    assert card["annotate"]["limit"] == {"depth": 4} and card["annotate"]["stockfish"].startswith("Stockfish")


def test_annotation_resumes_without_redoing_shards(tiny_dataset):
    from analysis.data.annotate import AnnotateConfig, annotate_dataset
    from analysis.engines.limit import EngineLimit
    from analysis.data.store import shard_path

    first = shard_path(tiny_dataset, 0)
    before = first.stat().st_mtime_ns
    second = shard_path(tiny_dataset, 1)
    second.unlink()  # as if interrupted before the last shard was written
    annotate_dataset(tiny_dataset, AnnotateConfig(limit=EngineLimit(depth=4), multipv_share=0.5, workers=1,
                                                  shard_size=16, max_positions=30), progress=False)
    assert first.stat().st_mtime_ns == before and second.exists()
    assert pq.read_table(second, filters=[("source", "!=", "refute")]).num_rows == 14


def test_train_export_puzzles_match(tiny_dataset, tmp_path):
    from analysis.checkpoint import load_checkpoint, load_evaluator
    from analysis.data.sources import eco_openings
    from analysis.eval.agents import SearchAgent, StockfishAgent, StockfishSettings
    from analysis.eval.match import play_match
    from analysis.eval.puzzles import load_puzzles, run_puzzles
    from analysis.train.config import TrainConfig
    from analysis.train.loop import train

    cfg = TrainConfig(data=tiny_dataset, out=tmp_path / "run", model="cf-tiny", steps=20, batch_size=16,
                      model_overrides=FAST,
                      lr_steps=[[0, 2e-3]], swa_start=10, swa_every=2, val_every=10, checkpoint_every=10,
                      log_every=1, num_workers=0, seed=1)
    path = train(cfg, progress=False)
    history = __import__("json").loads((cfg.out / "history.json").read_text())
    losses = [row["total"] for row in history["train"]]
    assert len(losses) == 20
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5  # it learns
    assert history["val"] and (cfg.out / "loss_curves.png").stat().st_size > 0
    assert path.with_suffix(".loss.png").exists()
    model, meta = load_checkpoint(path)
    assert meta.trained and meta.provenance["steps"] == 20 and meta.provenance["swa"]["averaged"] == 6
    assert meta.provenance["data_card"]["annotate"]["limit"] == {"depth": 4}

    evaluator = load_evaluator(path, device="cpu")
    puzzles = load_puzzles(require_shared_data("puzzles/lichess_puzzles_1000.csv"), limit=10)
    report = run_puzzles(puzzles, SearchAgent(evaluator, "policy").choose)
    assert report.total == 10 and 0 <= report.solved <= 10

    sf = StockfishAgent(StockfishSettings(elo=1350, movetime=0.01))
    try:
        result = play_match(SearchAgent(evaluator, "policy"), sf, eco_openings(require_shared_data("openings")), 2,
                            max_plies=60, pgn_path=tmp_path / "games.pgn")
    finally:
        sf.close()
    assert result.wins + result.draws + result.losses == 2
    assert (tmp_path / "games.pgn").read_text().count("[Event ") == 2
    assert {g.headers["White"] for g in result.games} == {result.a, result.b}  # colours swapped


def test_training_resumes_from_its_state(tiny_dataset, tmp_path):
    from analysis.train.config import TrainConfig
    from analysis.train.loop import train

    cfg = TrainConfig(data=tiny_dataset, out=tmp_path / "run", model="cf-tiny", steps=4, batch_size=8, model_overrides=FAST,
                      checkpoint_every=2, log_every=1, num_workers=0)
    train(cfg, progress=False)
    cfg.steps = 6
    path = train(cfg, progress=False)
    from analysis.checkpoint import load_checkpoint

    _, meta = load_checkpoint(path)
    assert meta.provenance["steps"] == 6


def test_fine_tuning_starts_from_a_checkpoint(tiny_dataset, tmp_path):
    import torch

    from analysis.checkpoint import load_checkpoint
    from analysis.train.config import TrainConfig
    from analysis.train.loop import train

    base = TrainConfig(data=tiny_dataset, out=tmp_path / "base", model="cf-tiny", steps=3, batch_size=8,
                       model_overrides=FAST, log_every=1, num_workers=0, seed=2)
    first = train(base, progress=False)
    start, _ = load_checkpoint(first)
    # lr 0 keeps the weights where init_from put them, so the export must equal the source.
    tuned = TrainConfig(data=tiny_dataset, out=tmp_path / "tuned", model="cf-tiny", steps=2, batch_size=8,
                        model_overrides=FAST, init_from=first, lr_steps=[[0, 0.0]], log_every=1, num_workers=0,
                        seed=3)
    model, meta = load_checkpoint(train(tuned, progress=False))
    for name, tensor in start.state_dict().items():
        torch.testing.assert_close(model.state_dict()[name], tensor)
    assert meta.provenance["init_from"]["path"] == str(first) and meta.provenance["init_from"]["steps"] == 3

    mismatched = TrainConfig(data=tiny_dataset, out=tmp_path / "bad", model="cf-tiny", steps=1, batch_size=8,
                             init_from=first, num_workers=0)  # Shaw, while the source uses relative bias
    with pytest.raises(ValueError, match="differs from the run"):
        train(mismatched, progress=False)


def test_cli_errors_are_clean(tmp_path, capsys):
    from analysis.cli import main

    assert main(["annotate", "--data", str(tmp_path), "--depth", "2"]) == 2
    assert "generate" in capsys.readouterr().err
    assert main(["puzzles", "--model", str(tmp_path / "missing.safetensors"), "--algo", "policy",
                 "--csv", str(tmp_path / "p.csv")]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('data = "x"\nout = "y"\nlearning_rate = 3\n')
    assert main(["train", "--config", str(bad)]) == 2
    assert "unknown setting" in capsys.readouterr().err
    assert main(["report", "--model", str(tmp_path / "missing.safetensors")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["init", "--preset", "cf-tiny", "--out", str(tmp_path / "fresh.safetensors")]) == 0
    capsys.readouterr()
    assert main(["report", "--model", str(tmp_path / "fresh.safetensors")]) == 2
    assert "no measured metrics" in capsys.readouterr().err


def test_an_lc0_resnet_trains_on_the_stored_rows(tiny_dataset, tmp_path):
    """Another family through the same loop: lc0's SE-ResNet on the classical encoding's tokens."""
    from analysis.checkpoint import load_checkpoint
    from analysis.train.config import TrainConfig
    from analysis.train.loop import train

    cfg = TrainConfig(data=tiny_dataset, out=tmp_path / "run", family="lc0-resnet", model="se-2x16", steps=4,
                      batch_size=8, checkpoint_every=2, val_every=2, log_every=1, num_workers=0)
    path = train(cfg, progress=False)
    model, meta = load_checkpoint(path)
    assert meta.family == "lc0-resnet" and meta.trained and meta.input_encoding == "lc0/INPUT_CLASSICAL_112_PLANE"
    history = __import__("json").loads((cfg.out / "history.json").read_text())
    assert {"policy", "value", "total"} <= set(history["train"][-1])
