"""Self-play training: a tiny Gardner run for a few games, resume, the targets, bad configs."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from analysis.checkpoint import load_checkpoint
from analysis.cli import main
from analysis.encoding.graph import GRAPH_5X5
from analysis.train.selfplay import selfplay_train
from analysis.train.selfplay_config import SelfPlayConfig, load_selfplay_config
from analysis.gardner import variant_board
from analysis.train.selfplay_games import Game, ReplayWindow


def _tiny(tmp_path, **overrides) -> SelfPlayConfig:
    settings = dict(out=tmp_path / "run", model="ag-tiny", variant="gardner", iterations=1, games_per_iteration=2,
                    simulations=4, max_considered_actions=4, search_batch=4, max_plies=12, window=500,
                    batch_size=16, threads=1, device="cpu")
    settings.update(overrides)
    return SelfPlayConfig(**settings)


def test_tiny_gardner_run_plays_trains_exports_and_resumes(tmp_path):
    path = selfplay_train(_tiny(tmp_path), progress=False)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert len(history) == 1 and history[0]["games"] == 2
    assert history[0]["white_wins"] + history[0]["draws"] + history[0]["black_wins"] == 2
    assert 0 < history[0]["positions"] <= 24 and history[0]["steps"] >= 1
    assert np.isfinite(history[0]["loss_total"])
    model, meta = load_checkpoint(path)
    assert meta.trained and meta.input_encoding == GRAPH_5X5.name and model.config.board == 5
    assert meta.provenance["board_sizes"] == [5] and meta.provenance["selfplay"]["games"] == 2
    # Resume: the second run continues at iteration 2 with the first one's window.
    selfplay_train(_tiny(tmp_path, iterations=2), progress=False)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert [row["iteration"] for row in history] == [1, 2]
    assert history[1]["window"] == history[0]["positions"] + history[1]["positions"]


def test_worker_processes_play_the_same_games_as_the_loop(tmp_path):
    """Each game's search seed is drawn before play, so two spawned workers reproduce the in-process games."""
    here = selfplay_train(_tiny(tmp_path / "here", games_per_iteration=3), progress=False)
    pooled = selfplay_train(_tiny(tmp_path / "pool", games_per_iteration=3, workers=2), progress=False)
    rows = [json.loads((tmp_path / name / "run" / "history.json").read_text())[0] for name in ("here", "pool")]
    keys = ("games", "positions", "white_wins", "draws", "black_wins", "mean_plies")
    assert [rows[0][k] for k in keys] == [rows[1][k] for k in keys]
    assert load_checkpoint(pooled)[1].trained and load_checkpoint(here)[1].trained
    with pytest.raises(ValueError, match="workers"):
        _tiny(tmp_path, workers=0)


def test_fine_tuning_a_gardner_network_on_8x8_keeps_its_weights(tmp_path):
    gardner = selfplay_train(_tiny(tmp_path / "a", games_per_iteration=1), progress=False)
    cfg = _tiny(tmp_path / "b", variant="chess", model="ag-tiny", init_from=gardner, games_per_iteration=1,
                max_plies=4, passes=0.01)
    chess_net = selfplay_train(cfg, progress=False)
    model, meta = load_checkpoint(chess_net)
    assert model.config.board == 8 and meta.provenance["board_sizes"] == [5, 8]


def test_value_targets_follow_the_side_to_move():
    game = Game("gardner", variant_board("gardner").fen(), ["a2a3", "b4b3"], [], 1.0)
    assert [game.value_target(p) for p in range(3)] == [1.0, -1.0, 1.0]
    assert game.board_at(2).fen() == "rnbqk/p1ppp/Pp3/1PPPP/RNBQK w - - 0 2"


def test_replay_window_drops_the_oldest_positions():
    window = ReplayWindow(5)
    target = (np.array([0]), np.array([1.0], np.float32))
    for n in (3, 3, 2):
        window.add(Game("gardner", variant_board("gardner").fen(), ["a2a3", "b4b3", "c2c3"][:n], [target] * n, 0.0))
    assert len(window) == 5 and sorted(window.games) == [1, 2]
    batch = window.batch(np.arange(5), GRAPH_5X5, 455)
    assert batch["inputs"].shape == (5, 25 * 119 + 455) and batch["legal"].sum() == 5


@pytest.mark.parametrize("text,reason", [
    ('out = "x"\nvariant = "shogi"\n', "variant must be one of"),
    ('out = "x"\nbogus = 1\n', "unknown setting"),
    ('variant = "gardner"\n', "missing required setting 'out'"),
    ('out = "x"\nsimulations = 0\n', "simulations must be a positive integer"),
])
def test_bad_configs_are_one_clear_error(tmp_path, capsys, text, reason):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=reason):
        load_selfplay_config(path)
    assert main(["selfplay", "--config", str(path)]) == 2
    assert reason.split()[0] in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_gardner_board_is_what_the_gardner_variant_plays():
    board = variant_board("gardner")
    assert board.board_size == 5 and len(list(board.legal_moves)) == 7
    assert variant_board("chess") == chess.Board()
