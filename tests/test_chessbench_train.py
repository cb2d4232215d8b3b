"""ChessBench training through the shared loop: targets from the store's rows, encoded at
load time; Adam, clipping, an EMA export; resume and init_from as for Chessformer."""

import json

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.encoding import get_encoding
from analysis.encoding.chessbench import NAME as ENCODING
from analysis.encoding.chessbench_actions import actions
from analysis.models.chessbench.config import PRESETS
from analysis.models.chessbench.data import ChessBenchDataset
from analysis.models.chessbench.losses import ChessBenchLossWeights, chessbench_losses, one_hot_bins
from analysis.train.config import TrainConfig, load_config
from analysis.train.loop import train
from analysis.models.losses import hl_gauss_targets
from tests.annotated_fixture import write_fixture_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_fixture_dataset(tmp_path_factory.mktemp("cb-data"))


def _config(dataset, out, **kw) -> TrainConfig:
    base = dict(data=dataset, out=out, family="chessbench", model="cb-tiny", steps=12, batch_size=32,
                optimizer="adam", betas=(0.9, 0.999), eps=1e-8, grad_clip=1.0, lr_steps=[[0, 1e-3]],
                swa_start=0, swa_every=1, ema_decay=0.99, val_every=6, checkpoint_every=6, log_every=1,
                num_workers=0, seed=1)
    base.update(kw)
    return TrainConfig(**base)


def test_action_value_samples_are_the_multipv_moves(dataset):
    data = ChessBenchDataset([dataset], "train", PRESETS["cb-tiny"])
    batch = data[np.arange(len(data))]
    assert batch["tokens"].shape == (len(data), 78)
    # Each sample's action is a legal move of its FEN, and its target that move's stored win.
    for i in range(0, len(data), 37):
        fen = data.fens[data.rows[i]]
        move = chess.Move.from_uci(actions()[int(batch["tokens"][i, -1])])
        assert move in chess.Board(fen).legal_moves
    assert 0 <= batch["win"].min() and batch["win"].max() <= 1
    sv = ChessBenchDataset([dataset], "train", PRESETS["cb-9m-sv"])
    bc = ChessBenchDataset([dataset], "train", PRESETS["cb-9m-bc"])
    assert len(sv) == len(bc) < len(data) and sv[np.arange(4)]["tokens"].shape == (4, 77)
    first = bc[np.arange(1)]
    assert chess.Move.from_uci(actions()[int(first["action"][0])]) in chess.Board(bc.fens[0]).legal_moves


def test_colour_flip_gives_the_mirrored_position_and_move(dataset):
    plain = ChessBenchDataset([dataset], "train", PRESETS["cb-tiny"])
    flipped = ChessBenchDataset([dataset], "train", PRESETS["cb-tiny"], colour_flip_share=0.5, seed=3)
    idx = np.arange(len(plain))
    a, b = plain[idx], flipped[idx]
    assert torch.equal(a["win"], b["win"])  # chess is symmetric under the mirror: targets stand
    changed = (a["tokens"] != b["tokens"]).any(1).numpy()
    assert 0.3 < changed.mean() < 0.7
    for i in np.flatnonzero(changed)[::29]:
        board = chess.Board(plain.fens[plain.rows[i]])
        move = chess.Move.from_uci(actions()[int(a["tokens"][i, -1])])
        mirrored_move = chess.Move.from_uci(actions()[int(b["tokens"][i, -1])])
        assert mirrored_move == chess.Move(chess.square_mirror(move.from_square),
                                           chess.square_mirror(move.to_square), move.promotion)
        expected = get_encoding(ENCODING).encode_fens([board.mirror().fen()])[0]
        assert np.array_equal(b["tokens"][i, :-1].numpy(), expected)
    bc = ChessBenchDataset([dataset], "train", PRESETS["cb-9m-bc"], colour_flip_share=1.0)
    first = bc[np.arange(1)]
    assert chess.Move.from_uci(actions()[int(first["action"][0])]) in chess.Board(bc.fens[0]).mirror().legal_moves


def test_value_targets_hl_gauss_and_one_hot():
    values = torch.tensor([0.0, 0.5, 0.37, 1.0, 1 / 128])
    one_hot = one_hot_bins(values, 128)
    assert one_hot.argmax(-1).tolist() == [0, 63, 47, 127, 0]  # on an edge: the lower bin
    smooth = hl_gauss_targets(values, 128, sigma_ratio=0.75)
    assert torch.allclose(smooth.sum(-1), torch.ones(5))
    centres = (torch.arange(128) + 0.5) / 128
    assert abs(float(smooth[2] @ centres) - 0.37) < 1e-3  # centred on the value, spread over ~2 bins
    assert float(smooth[2].max()) < 0.6 and (smooth[2] > 0.01).sum() >= 3
    logits = torch.zeros(5, 128, requires_grad=True)
    hl = chessbench_losses({"action_logits": logits}, {"win": values}, ChessBenchLossWeights())["total"]
    oh = chessbench_losses({"action_logits": logits}, {"win": values},
                           ChessBenchLossWeights(value_target="one_hot"))["total"]
    assert hl.item() == pytest.approx(oh.item(), rel=1e-4)  # uniform logits: both are log K
    with pytest.raises(ValueError, match="value_target"):
        ChessBenchLossWeights(value_target="l2")


def test_training_smoke_resume_and_ema(dataset, tmp_path):
    cfg = _config(dataset, tmp_path / "run", steps=6)
    train(cfg, progress=False)
    cfg.steps = 12
    path = train(cfg, progress=False)  # resumes from its state at step 6
    history = json.loads((cfg.out / "history.json").read_text())
    losses = [row["total"] for row in history["train"]]
    assert len(losses) == 12 and np.mean(losses[-4:]) < np.mean(losses[:4])  # it learns
    assert history["val"] and "value" in history["val"][-1]
    model, meta = load_checkpoint(path)
    assert meta.family == "chessbench" and meta.trained and meta.input_encoding == "chessbench/fen77"
    assert meta.provenance["optimizer"] == "Adam" and meta.provenance["swa"]["ema_decay"] == 0.99
    assert meta.provenance["swa"]["averaged"] == 12 and meta.provenance["steps"] == 12
    state = torch.load(cfg.out / "state.pt", weights_only=False)
    # The export is the EMA, not the last weights.
    ema = {k[len("module."):]: v for k, v in state["swa"].items() if k.startswith("module.")}
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, ema[name])
    assert any(not torch.equal(model.state_dict()[k], state["model"][k]) for k in state["model"])


def test_init_from_and_one_hot_from_toml(dataset, tmp_path):
    first = train(_config(dataset, tmp_path / "a", steps=2), progress=False)
    toml = tmp_path / "cb.toml"
    toml.write_text(f'data = "{dataset}"\nout = "{tmp_path / "b"}"\nfamily = "chessbench"\nmodel = "cb-tiny"\n'
                    f'init_from = "{first}"\nsteps = 2\nbatch_size = 8\noptimizer = "adam"\n'
                    f'lr_steps = [[0, 0.0]]\nnum_workers = 0\n[loss]\nvalue_target = "one_hot"\n')
    cfg = load_config(toml)
    assert cfg.loss.value_target == "one_hot"
    start, _ = load_checkpoint(first)
    model, meta = load_checkpoint(train(cfg, progress=False))
    for name, tensor in start.state_dict().items():
        torch.testing.assert_close(model.state_dict()[name], tensor)  # lr 0: the export is the source
    assert meta.provenance["init_from"]["path"] == str(first)
    bad = _config(dataset, tmp_path / "c", steps=1, init_from=first, model_overrides={"layers": 3})
    with pytest.raises(ValueError, match="differs from the run"):
        train(bad, progress=False)
