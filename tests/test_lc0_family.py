"""Lc0 networks as registered families: the one evaluator, encodings per input format, the
importer (a ``.pb.gz`` anywhere a checkpoint goes) and every command on a converted Maia."""

from __future__ import annotations

import json
import subprocess
import sys

import chess
import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from analysis.checkpoint import CheckpointError, load_checkpoint, read_header, save_checkpoint
from analysis.cli import main
from analysis.encoding import INPUT_FORMAT, get_encoding
from analysis.models import get_family, importer_for
from analysis.models.lc0 import evaluate_boards, load_lc0
from analysis.models.lc0.convert import convert
from analysis.encoding.lc0_formats import BY_INPUT_FORMAT as ENCODINGS
from analysis.search import Budget, run_search
from analysis.eval.specs import resolve_agent, resolve_evaluator
from tests.conftest import ROOT, require_shared_data

SE = "lc0/synthetic/synth_se_2x16_wdl_mlh.pb.gz"
BT = "lc0/synthetic/synth_bt_dense_multihead.pb.gz"  # input format 5 (canonical V2)
MAIA = "lc0/maia-1100.pb.gz"
FENS = (chess.STARTING_FEN, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 2",
        "8/8/4k3/8/2K5/8/8/7R b - - 0 80", "6k1/8/8/8/8/8/8/K2Q4 w - - 0 1")


def boards():
    return [chess.Board(f) for f in FENS]


def test_both_families_are_registered_with_their_capabilities():
    resnet, attention = get_family("lc0-resnet"), get_family("lc0-attention")
    maia = resnet.capabilities(resnet.presets["maia"])
    assert maia.policy and maia.wdl and maia.attention is None and not maia.action_values
    bt = attention.presets["bt-tiny"]
    assert attention.capabilities(bt).attention == (bt.encoders, bt.heads)
    assert importer_for("net.pb.gz") is resnet.importer and importer_for("net.safetensors") is None


def test_every_input_format_is_a_registered_encoding_and_the_classical_one_is_shared():
    assert ENCODINGS[1] is get_encoding(INPUT_FORMAT)
    for encoding in ENCODINGS.values():
        assert get_encoding(encoding.name) is encoding
        assert encoding.encode(boards()).shape == (len(FENS), 64, 112)


def test_an_lc0_encoding_is_found_by_name_in_a_fresh_process():
    """The site keys a job's positions by name before anything loads the family."""
    code = ("from analysis.encoding import get_encoding; import chess; "
            "print(len(get_encoding('lc0/INPUT_112_WITH_CANONICALIZATION_V2').position_key(chess.Board())))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert int(out.stdout) > 0


@pytest.mark.parametrize("source", [SE, BT])
def test_the_evaluator_on_a_pb_gz_and_on_its_conversion_agrees_with_the_lc0_path(tmp_path, source):
    path = require_shared_data(source)
    converted = convert(path, tmp_path / "net.safetensors")
    native = evaluate_boards(load_lc0(path), boards(), attention=True)
    for spec in (str(path), str(converted)):
        evaluator = resolve_evaluator(spec)
        assert evaluator.trained and evaluator.capabilities.wdl
        evaluations = evaluator.evaluate(boards(), attention=evaluator.capabilities.attention is not None)
        for ours, theirs in zip(evaluations, native):
            assert ours.wdl == pytest.approx(theirs.wdl, abs=1e-6)
            assert ours.score == pytest.approx((1 + theirs.q) / 2, abs=1e-6)
            assert ours.extras["moves_left"] == pytest.approx(theirs.moves_left, abs=1e-5)
            for move, p in theirs.policy.items():
                assert ours.policy[move] == pytest.approx(p, abs=1e-6)
            if ours.attention is not None:
                assert ours.attention.shape[-2:] == (64, 64)
                np.testing.assert_allclose(ours.attention, theirs.attention, atol=1e-6)


def test_equal_cache_keys_mean_equal_outputs_under_the_canonical_transform():
    evaluator = resolve_evaluator(str(require_shared_data(BT)))
    mirrored = chess.Board("8/8/4k3/8/2K5/8/8/7R b - - 0 80").transform(chess.flip_horizontal)
    original = chess.Board("8/8/4k3/8/2K5/8/8/7R b - - 0 80")
    assert evaluator.cache_key(original) == evaluator.cache_key(mirrored)
    a, b = evaluator.evaluate([original, mirrored])
    assert a.score == pytest.approx(b.score, abs=1e-6)


def test_a_checkpoint_whose_encoding_does_not_fit_its_config_is_refused(tmp_path):
    model = load_lc0(require_shared_data(BT))  # input format 5
    path = save_checkpoint(tmp_path / "bt.safetensors", model, trained=True)
    assert read_header(path)[0].input_encoding == "lc0/INPUT_112_WITH_CANONICALIZATION_V2"
    with safe_open(str(path), "pt") as f:
        metadata, tensors = f.metadata(), {k: f.get_tensor(k) for k in f.keys()}
    bad = tmp_path / "bad.safetensors"
    save_file(tensors, str(bad), metadata={**metadata, "input_encoding": INPUT_FORMAT})  # a format 1 encoding
    with pytest.raises(CheckpointError, match="does not match the config"):
        load_checkpoint(bad)


def test_a_bad_pb_gz_given_as_a_model_is_one_clear_error(tmp_path, capsys):
    junk = tmp_path / "junk.pb.gz"
    junk.write_bytes(b"not gzip at all")
    with pytest.raises(CheckpointError, match="junk.pb.gz"):
        resolve_evaluator(str(junk))
    assert main(["evaluate", "--model", str(junk), "--fen", chess.STARTING_FEN]) == 2
    assert "junk.pb.gz" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError):
        resolve_evaluator(str(tmp_path / "absent.pb.gz"))


def test_searches_and_agents_run_on_a_pb_gz():
    path = str(require_shared_data(MAIA))
    evaluator = resolve_evaluator(path)
    for algo in ("policy", "mcts", "alphabeta"):
        result = run_search(algo, chess.Board(), evaluator, budget=Budget(nodes=8))
        assert result.best_move in chess.Board().legal_moves
    agent = resolve_agent(f"{path}:policy")
    assert agent.choose(chess.Board()) in chess.Board().legal_moves


@pytest.mark.parametrize("command", [
    ["evaluate", "--fen", FENS[1], "--json"],
    ["search", "--algo", "mcts", "--nodes", "16", "--json"],
])
def test_commands_take_a_pb_gz_directly(command, capsys):
    path = str(require_shared_data(MAIA))
    assert main([command[0], "--model", path, *command[1:]]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data  # a JSON answer, not an error


def test_the_uci_engine_plays_a_pb_gz():
    path = str(require_shared_data(MAIA))
    out = subprocess.run([sys.executable, "-m", "analysis", "uci", "--model", path, "--algo", "policy"], cwd=ROOT,
                         input="uci\nisready\nposition startpos moves e2e4\ngo nodes 1\nquit\n",
                         capture_output=True, text=True, timeout=120)
    assert "readyok" in out.stdout and "bestmove " in out.stdout, out.stderr
    move = out.stdout.split("bestmove ")[1].split()[0]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves


def test_puzzles_sts_and_match_run_on_a_converted_maia(tmp_path, capsys):
    maia = convert(require_shared_data(MAIA), tmp_path / "maia.safetensors", float16=True)
    csv = require_shared_data("puzzles/lichess_puzzles_1000.csv")
    assert main(["puzzles", "--model", str(maia), "--algo", "policy", "--csv", str(csv), "--limit", "5",
                 "--threads", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 5
    epd = require_shared_data("suites/sts_v3.epd")
    assert main(["sts", "--model", str(maia), "--algo", "policy", "--epd", str(epd), "--limit", "5",
                 "--threads", "1", "--json"]) == 0
    capsys.readouterr()
    assert main(["match", "--a", f"{maia}:policy", "--b", "material-greedy", "--games", "2", "--max-plies", "20",
                 "--openings", str(require_shared_data("openings")), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)


def test_puzzles_sts_and_match_take_a_pb_gz_directly(capsys):
    maia = str(require_shared_data(MAIA))
    assert main(["puzzles", "--model", maia, "--algo", "policy", "--csv",
                 str(require_shared_data("puzzles/lichess_puzzles_1000.csv")), "--limit", "2", "--threads", "1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 2
    assert main(["sts", "--model", maia, "--algo", "policy", "--epd", str(require_shared_data("suites/sts_v3.epd")),
                 "--limit", "2", "--threads", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["maximum"] == 20
    assert main(["match", "--a", f"{maia}:policy", "--b", "material-greedy", "--games", "2", "--max-plies", "10",
                 "--openings", str(require_shared_data("openings")), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 2 and result["a"] == "maia-1100:policy"  # named without ".pb"


def test_lc0_losses_train_a_step():
    family = get_family("lc0-resnet")
    model = family.build(family.presets["se-2x16"])
    tokens = torch.from_numpy(get_encoding(INPUT_FORMAT).encode(boards()))
    legal = torch.zeros(len(FENS), 1858, dtype=torch.bool)
    legal[:, :20] = True
    batch = {"policy": legal.float() / 20, "legal": legal, "q": torch.zeros(len(FENS))}
    terms = family.losses(model(tokens), batch, family.loss_weights())
    terms["total"].backward()
    assert set(terms) == {"policy", "value", "total"} and torch.isfinite(terms["total"])


def test_attaching_metrics_keeps_float16_weights_as_stored(tmp_path):
    from analysis.eval.report import attach_metrics

    path = convert(require_shared_data(SE), tmp_path / "se.safetensors", float16=True)
    before = {name: dtype for name, (dtype, _) in read_header(path)[1].items()}
    attach_metrics(path, {"puzzles_policy": {"accuracy": 0.5, "solved": 1, "total": 2}})
    meta, tensors = read_header(path)
    assert {name: dtype for name, (dtype, _) in tensors.items()} == before and set(before.values()) == {"F16"}
    assert meta.metrics["puzzles_policy"]["solved"] == 1 and meta.provenance["storage"] == "float16"
    written = path.read_bytes()
    path.touch()
    stamp = path.stat().st_mtime_ns
    attach_metrics(path, {"puzzles_policy": {"accuracy": 0.5, "solved": 1, "total": 2}})  # nothing new
    assert path.read_bytes() == written and path.stat().st_mtime_ns == stamp  # not rewritten
    with pytest.raises(CheckpointError):
        attach_metrics(require_shared_data(SE), {"x": {}})  # a .pb.gz is not rewritten


def test_a_dense_embedding_without_its_ffn_is_refused(tmp_path):
    """lc0 runs the dense embedding's FFN for every PE_DENSE net: one without it would run differently here."""
    from analysis.models.lc0.config import AttentionConfig
    from tests.lc0_random_nets import write_net

    shape = dict(encoders=1, embed=32, heads=4, d_model=32, ffn=48, embedding="pe_dense", dense_features=4,
                 policy_embed=16, policy_dim=16, value_channels=4, value_hidden=8)
    assert load_lc0(write_net(tmp_path / "with.pb.gz", AttentionConfig(**shape, embedding_ffn=48))) is not None
    with pytest.raises(CheckpointError, match="without its FFN"):
        load_lc0(write_net(tmp_path / "without.pb.gz", AttentionConfig(**shape, embedding_ffn=0)))
