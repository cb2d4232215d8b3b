"""Imported lc0 networks against what lc0 itself computed (../shared/data/lc0/reference).

For each of the 8 reference networks on 40 positions: our encoder's planes
equal lc0's exactly; our network fed lc0's planes matches its raw policy
logits to 1e-4 and q, d, m to 1e-5; boards in, legal-move policy and WDL out
agree with lc0 wherever lc0 maps moves correctly (it does not for canonical
positions whose transform includes the transpose, lc0 >= 0.32).
"""

from __future__ import annotations

import json
from functools import lru_cache

import chess
import numpy as np
import pytest
import torch

from analysis.models.lc0.evaluate import evaluate_boards
from analysis.models.lc0.convert.load import load_lc0
from analysis.encoding.lc0_formats import TRANSPOSE, encode_boards, move_indices
from tests.conftest import require_shared_data

NETS = {
    "maia-1100": "maia-1100.pb.gz", "maia-1500": "maia-1500.pb.gz", "maia-1900": "maia-1900.pb.gz",
    "meangirl-8": "meangirl-8.pb.gz",
    "synth_se_2x16_wdl_mlh": "synthetic/synth_se_2x16_wdl_mlh.pb.gz",
    "synth_bt_dense_multihead": "synthetic/synth_bt_dense_multihead.pb.gz",
    "synth_bt_dense_multihead_f16": "synthetic/synth_bt_dense_multihead_f16.pb.gz",
    "synth_t1_pemap_single": "synthetic/synth_t1_pemap_single.pb.gz",
}
LOGIT_TOL, VALUE_TOL = 1e-4, 1e-5


@lru_cache(maxsize=None)
def network(name: str):
    return load_lc0(require_shared_data(f"lc0/{NETS[name]}"))


@lru_cache(maxsize=None)
def reference(name: str) -> dict[str, np.ndarray]:
    with np.load(require_shared_data(f"lc0/reference/{name}.npz")) as z:
        return {k: z[k] for k in z.files}


@lru_cache(maxsize=1)
def boards() -> tuple[chess.Board, ...]:
    out = []
    for item in json.loads(require_shared_data("lc0/reference/positions.json").read_text()):
        board = chess.Board(item["fen"]) if item["fen"] else chess.Board()
        for move in item["moves"]:
            board.push_uci(move)
        out.append(board)
    return tuple(out)


@pytest.mark.parametrize("name", NETS)
def test_planes_equal_lc0s(name):
    planes, _ = encode_boards(boards(), network(name).config.input_format)
    expected = reference(name)["planes"]
    for i, (mine, theirs) in enumerate(zip(planes, expected)):
        differing = np.nonzero((mine != theirs).any(axis=1))[0].tolist()
        assert not differing, f"position {i}: planes {differing} differ from lc0's"


@pytest.mark.parametrize("name", NETS)
def test_network_on_lc0_planes_matches_raw_outputs(name):
    ref = reference(name)
    with torch.no_grad():
        out = network(name)(torch.from_numpy(ref["planes"]).transpose(1, 2))
    assert np.abs(out["policy"].numpy() - ref["logits"]).max() <= LOGIT_TOL
    for column, key in enumerate("qdm"):
        ours = out[key].numpy() if key in out else np.zeros(len(ref["qdm"]))  # lc0 reports 0 for a missing head
        assert np.abs(ours - ref["qdm"][:, column]).max() <= VALUE_TOL, key


@pytest.mark.parametrize("name", NETS)
def test_board_to_policy_and_wdl_matches_lc0(name):
    model, ref = network(name), reference(name)
    _, encoded = encode_boards(boards(), model.config.input_format)
    answers = evaluate_boards(model, boards())
    compared = 0
    for i, (board, answer) in enumerate(zip(boards(), answers)):
        if encoded[i].transform & TRANSPOSE:
            continue  # lc0 reads these logits with the wrong square transform (see module docstring)
        moves = list(board.legal_moves)
        logits = ref["logits"][i][move_indices(board, moves, encoded[i].transform)]
        expected = np.exp(logits - logits.max())
        expected /= expected.sum()
        ours = np.array([answer.policy[m] for m in moves])
        assert np.abs(ours - expected).max() <= LOGIT_TOL, f"position {i}"
        q, d = ref["qdm"][i, :2]
        assert np.allclose(answer.wdl, ((1 + q - d) / 2, d, (1 - q - d) / 2), atol=VALUE_TOL), f"position {i}"
        compared += 1
    assert compared >= 39


def test_the_agreement_table_command_reports_these_figures(capsys):
    """``python -m analysis.models.lc0.agreement`` prints the table of docs/lc0.md; one row checked here."""
    from analysis.models.lc0.agreement import compare, main, table

    lc0_dir = require_shared_data("lc0")
    row = compare(lc0_dir, "synth_t1_pemap_single", list(boards()))
    assert row.planes_equal and row.logits <= LOGIT_TOL and max(row.q, row.d, row.m) <= VALUE_TOL
    assert row.policy <= LOGIT_TOL and row.skipped == 1
    assert table([row]).splitlines()[2].startswith("| synth_t1_pemap_single | yes | ")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "lc0_dir" in capsys.readouterr().out
