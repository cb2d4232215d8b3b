"""Giraffe training: the TD-Leaf error and update on hand-checkable cases, the material
bootstrap, and a tiny run of every stage with resume and the wall-clock stop."""

import json

import chess
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.models import get_family
from analysis.train.giraffe.bootstrap import bootstrap_data, material_error, run_bootstrap
from analysis.train.giraffe.config import BootstrapConfig, GiraffeRunConfig, load_config
from analysis.train.giraffe.material import material_cp, material_value
from analysis.train.giraffe.run import train
from analysis.train.giraffe.tdleaf import Trajectory, td_error, tdleaf_loss, tdleaf_step
from analysis.train.giraffe.value_evaluator import features_tensor

GAME = """[Event "t"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8
10. d4 Nbd7 11. c4 c6 12. cxb5 axb5 13. Nc3 Bb7 14. Bg5 b4 15. Nb1 h6 16. Bh4 c5 1-0
"""


# Two STS records (the suite's format: c8 points, c9 UCI moves).
STS = """1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id "STS(v1.0) Undermine.001"; c0 "f5=10"; c8 "10 3"; c9 "f4f5 e2e4";
1q2r1k1/5ppp/2p5/1p1b4/1P6/2PQ4/5PPP/R3R1K1 w - - bm Qd4; id "STS(v1.0) Undermine.002"; c0 "Qd4=10"; c8 "10"; c9 "d3d4";
"""


def model(seed=0):
    torch.manual_seed(seed)
    family = get_family("giraffe")
    return family.build(family.preset("giraffe-2015")).eval()


def test_td_error_of_the_papers_table_2():
    # Scores 10, 20, 20, 20, -10, -10, -10, 40, ...: changes after moves 1, 4 and 7.
    scores = [10, 20, 20, 20, -10, -10, -10, 40, 40, 40, 40, 40]
    # 0.7 * 10 - 0.7^4 * 30 + 0.7^7 * 50 = 7 - 7.203 + 4.118 = 3.915. The paper prints the
    # same three contributions (7, -7.2, 4.12) but a total of 4.10, which is not their sum.
    assert td_error(scores, 0.7) == pytest.approx(7 - 0.7 ** 4 * 30 + 0.7 ** 7 * 50)
    assert td_error(scores, 0.7) == pytest.approx(3.915, abs=1e-3)
    assert td_error([0.3], 0.7) == 0.0
    assert td_error([0.0, 0.5, 0.5], 1.0) == pytest.approx(0.5)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tdleaf_step_moves_the_leaf_value_by_the_gradient(sign):
    """With plain SGD the output bias moves by lr * sign(error) * sign * (1 - v^2): the L1 gradient."""
    net = model()
    leaf = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    with torch.no_grad():
        v = net.evaluator(features_tensor([leaf]))[0].item()
    bias = net.evaluator.out.bias.item()
    optimizer = torch.optim.SGD(net.evaluator.parameters(), lr=0.01)
    loss = tdleaf_step(net, optimizer, [Trajectory(leaf, sign, [0.0, 0.2], 0.2)])
    assert loss == pytest.approx(0.2, abs=1e-6)  # |v - (v + error)|
    assert net.evaluator.out.bias.item() - bias == pytest.approx(0.01 * sign * (1 - v * v), rel=1e-4)
    with torch.no_grad():
        moved = sign * net.evaluator(features_tensor([leaf]))[0].item()
    assert moved > sign * v  # towards value + error


def test_tdleaf_target_stays_in_the_tanh_range():
    net = model()
    leaf = chess.Board()
    loss = tdleaf_loss(net, [leaf], torch.tensor([1.0]), torch.tensor([5.0]))
    with torch.no_grad():
        v = net.evaluator(features_tensor([leaf]))[0].item()
    assert loss.item() == pytest.approx(1.0 - v, abs=1e-6)


def test_material_targets():
    board = chess.Board("4k3/8/8/8/8/8/8/R3K3 b - - 0 1")
    assert material_cp(board) == -500
    assert material_value(board) < -0.7 and material_value(chess.Board()) == 0.0


def test_bootstrap_lowers_the_material_error():
    import random

    net = model()
    fens = [chess.Board().fen(), "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "4k3/8/8/8/8/8/8/R3K3 b - - 0 1", "4k3/8/3p4/4p3/8/8/8/4RK2 w - - 0 1"]
    features, targets = bootstrap_data(fens, 96, random.Random(0))
    before = material_error(net, features, targets)
    optimizer = torch.optim.Adadelta(net.evaluator.parameters(), lr=1.0, rho=0.99, eps=1e-8)
    run_bootstrap(net, optimizer, features, targets, BootstrapConfig(positions=96, epochs=30, batch_size=32),
                  torch.Generator().manual_seed(0))
    assert material_error(net, features, targets) < 0.5 * before


def _tiny(tmp_path, **overrides) -> GiraffeRunConfig:
    pgn = tmp_path / "game.pgn"
    pgn.write_text(GAME)
    sts = tmp_path / "sts.epd"
    sts.write_text(STS)
    values = dict(out=tmp_path / "run", positions={"pgn": [str(pgn)]},
                  bootstrap={"positions": 64, "epochs": 2, "batch_size": 32},
                  td={"iterations": 2, "positions": 3, "moves": 3, "nodes": 12, "max_qdepth": 1,
                      "sts_every": 2, "sts_positions": 2, "sts_nodes": 8, "sts_epd": str(sts)},
                  move={"positions": 6, "sample_nodes": 12, "label_nodes": 24, "epochs": 2, "batch_size": 4})
    values.update(overrides)
    return GiraffeRunConfig(**values)


def test_tiny_run_of_every_stage_resumes_and_exports(tmp_path):
    cfg = _tiny(tmp_path)
    lines = []
    train(cfg, progress=False, log=lines.append)
    history = json.loads((cfg.out / "history.json").read_text())
    assert [r["iteration"] for r in history["td"]] == [1, 2]
    assert [("sts" in r) for r in history["td"]] == [False, True]  # sts_every = 2
    assert history["sts_after_bootstrap"]["positions"] == 2
    assert history["bootstrap"][-1]["mse"] < history["bootstrap"][0]["mse"]
    assert history["move"]["positions"] >= 2 and len(history["move"]["epochs"]) == 2
    assert (cfg.out / "curve.png").stat().st_size > 0
    net, meta = load_checkpoint(cfg.out / "giraffe.safetensors")
    assert meta.trained and meta.provenance["td_leaf_iterations"] == 2
    # Resume: one more iteration on top of the saved two; finished stages are not redone.
    cfg = _tiny(tmp_path, td={"iterations": 3, "positions": 3, "moves": 3, "nodes": 12, "max_qdepth": 1})
    lines = []
    train(cfg, progress=False, log=lines.append)
    assert lines[0].startswith("resumed") and not any(line.startswith("bootstrap") for line in lines)
    history = json.loads((cfg.out / "history.json").read_text())
    assert [r["iteration"] for r in history["td"]] == [1, 2, 3]


def test_wall_clock_stop_saves_an_untrained_export(tmp_path):
    cfg = _tiny(tmp_path, max_wall_minutes=0.0)
    lines = []
    train(cfg, ("bootstrap", "td"), progress=False, log=lines.append)
    assert any("max_wall_minutes" in line for line in lines)
    cfg = _tiny(tmp_path, td={"iterations": 1, "positions": 2, "moves": 2, "nodes": 8, "max_qdepth": 1})
    train(cfg, ("bootstrap", "td"), progress=False, log=lines.append)
    _, meta = load_checkpoint(cfg.out / "giraffe.safetensors")
    # The evaluator is trained but the move evaluator is not: not presented as trained.
    assert not meta.trained and meta.provenance["move_evaluator"] == "untrained"


def test_config_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('out = "x"\n[td]\nnodez = 3\n')
    with pytest.raises(ValueError, match="nodez"):
        load_config(bad)
    bad.write_text('[td]\nnodes = 3\n')
    with pytest.raises(ValueError, match="out"):
        load_config(bad)
    with pytest.raises(ValueError, match="lambda"):
        GiraffeRunConfig(out=tmp_path, td={"lambda_": 1.5})
    with pytest.raises(ValueError, match="unknown stage"):
        train(GiraffeRunConfig(out=tmp_path), ("warmup",))


def test_move_evaluator_training_learns_its_labels():
    from analysis.encoding.giraffe import encode
    from analysis.train.giraffe.config import MoveConfig
    from analysis.train.giraffe.move_training import (LabelledPositions, top1_accuracy,
                                                                train_move_evaluator)

    boards = [chess.Board(), chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"),
              chess.Board("4k3/8/3p4/4p3/8/8/8/4RK2 w - - 0 1"), chess.Board("4k3/8/8/8/8/8/8/R3K3 b - - 0 1")]
    labels = [3, 7, 1, 2]  # arbitrary legal-move indices: the network must memorise them
    data = LabelledPositions(torch.from_numpy(encode(boards)), torch.tensor(labels))
    net = model()
    before = top1_accuracy(net, data)
    optimizer = torch.optim.Adam(net.move_evaluator.parameters(), lr=1e-2)
    rows = train_move_evaluator(net, optimizer, data, MoveConfig(epochs=150, batch_size=4),
                                torch.Generator().manual_seed(0))
    assert rows[-1]["bce"] < rows[0]["bce"]
    assert top1_accuracy(net, data) == 1.0 and before < 1.0


def test_stockfish_bootstrap_fits_the_datasets_win_probabilities(tmp_path):
    """The option the paper did not take: targets are 2 x win - 1 from the train split only."""
    import random

    from analysis.data.store import read_annotated
    from analysis.train.giraffe.bootstrap import stockfish_data
    from tests.annotated_fixture import write_fixture_dataset

    root = write_fixture_dataset(tmp_path / "data", games=4, plies=20)
    table = read_annotated(root, columns=["fen", "win"], split="train")
    wins = table["win"].to_pylist()
    features, targets = stockfish_data(root, 1000, random.Random(0))
    assert len(targets) == len(wins) == features.shape[0] and features.shape[1] == 363
    assert sorted(targets.tolist()) == pytest.approx(sorted(2 * w - 1 for w in wins))

    cfg = _tiny(tmp_path, bootstrap={"positions": 64, "epochs": 3, "batch_size": 16, "source": "stockfish",
                                     "data": str(root)})
    train(cfg, ("bootstrap",), progress=False, log=lambda line: None)
    history = json.loads((cfg.out / "history.json").read_text())
    assert history["bootstrap"][-1]["mse"] < history["bootstrap"][0]["mse"]
    _, meta = load_checkpoint(cfg.out / "giraffe.safetensors")
    assert meta.provenance["bootstrap"] == f"Stockfish win probabilities ({root})"


def test_stockfish_bootstrap_config_errors(tmp_path):
    with pytest.raises(ValueError, match="needs bootstrap.data"):
        BootstrapConfig(source="stockfish")
    with pytest.raises(ValueError, match="material or stockfish"):
        BootstrapConfig(source="lc0")
    cfg = _tiny(tmp_path, bootstrap={"source": "stockfish", "data": str(tmp_path / "nothing")})
    with pytest.raises(FileNotFoundError, match="no annotated shards"):
        train(cfg, ("bootstrap",), progress=False, log=lambda line: None)


def test_export_records_the_settings_and_the_sts_curve(tmp_path):
    cfg = _tiny(tmp_path)
    train(cfg, progress=False, log=lambda line: None)
    _, meta = load_checkpoint(cfg.out / "giraffe.safetensors")
    history = json.loads((cfg.out / "history.json").read_text())
    assert meta.provenance["settings"]["td"]["nodes"] == 12 and meta.provenance["settings"]["bootstrap"]["positions"] == 64
    assert meta.provenance["sts_curve"] == [[0, history["sts_after_bootstrap"]["score"]],
                                            [2, history["td"][1]["sts"]["score"]]]
    assert meta.provenance["move_held_out_top1"] == history["move"]["held_out_top1_after"]
