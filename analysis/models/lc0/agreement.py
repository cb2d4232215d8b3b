"""How far our lc0 port is from lc0's own outputs: the table in docs/lc0.md, reproducible.

``python -m analysis.models.lc0.agreement [LC0_DIR]`` reads ``LC0_DIR/reference/`` (lc0's planes,
raw logits and q/d/m for each network on the positions of ``positions.json``; see
``../shared/data/README.md``) and prints, per network, whether our planes equal lc0's and the
worst absolute differences: raw logits, q, d and m with lc0's planes fed in, and legal-move
probabilities from boards. Positions whose canonical transform includes the transpose are left
out of the last column: lc0 (>= 0.32) attaches their policy to the wrong moves. The tests
(``tests/test_lc0_reference.py``) hold the same comparisons to 1e-4 and 1e-5 on their own.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np
import torch

from analysis.models.lc0.evaluate import evaluate_boards
from analysis.models.lc0.convert.load import load_lc0
from analysis.encoding.lc0_formats import TRANSPOSE, encode_boards, move_indices

NETWORKS = ("maia-1100", "maia-1500", "maia-1900", "meangirl-8", "synth_se_2x16_wdl_mlh",
            "synth_bt_dense_multihead", "synth_bt_dense_multihead_f16", "synth_t1_pemap_single")


@dataclass
class Agreement:
    name: str
    planes_equal: bool
    logits: float
    q: float
    d: float
    m: float
    policy: float  # legal-move probabilities, boards in
    skipped: int  # positions left out of ``policy``


def reference_boards(directory: Path) -> list[chess.Board]:
    boards = []
    for item in json.loads((directory / "positions.json").read_text()):
        board = chess.Board(item["fen"]) if item["fen"] else chess.Board()
        for move in item["moves"]:
            board.push_uci(move)
        boards.append(board)
    return boards


def network_path(lc0_dir: Path, name: str) -> Path:
    return lc0_dir / (f"synthetic/{name}.pb.gz" if name.startswith("synth_") else f"{name}.pb.gz")


@torch.no_grad()
def compare(lc0_dir: Path, name: str, boards: list[chess.Board]) -> Agreement:
    model = load_lc0(network_path(lc0_dir, name))
    with np.load(lc0_dir / "reference" / f"{name}.npz") as z:
        ref = {k: z[k] for k in z.files}
    planes, encoded = encode_boards(boards, model.config.input_format)
    out = model(torch.from_numpy(ref["planes"]).transpose(1, 2))
    worst = {k: float(np.abs((out[k].numpy() if k in out else 0.0) - ref["qdm"][:, c]).max())
             for c, k in enumerate("qdm")}  # lc0 reports 0 for a head the net lacks
    policy, skipped = 0.0, 0
    for i, (board, answer) in enumerate(zip(boards, evaluate_boards(model, boards))):
        if encoded[i].transform & TRANSPOSE:
            skipped += 1
            continue
        moves = list(board.legal_moves)
        logits = ref["logits"][i][move_indices(board, moves, encoded[i].transform)]
        expected = np.exp(logits - logits.max())
        ours = np.array([answer.policy[m] for m in moves])
        policy = max(policy, float(np.abs(ours - expected / expected.sum()).max()))
    return Agreement(name, bool((planes == ref["planes"]).all()),
                     float(np.abs(out["policy"].numpy() - ref["logits"]).max()), worst["q"], worst["d"], worst["m"],
                     policy, skipped)


def table(rows: list[Agreement]) -> str:
    lines = ["| net | planes equal | logits | q | d | m | policy from boards | positions skipped |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        figures = " | ".join(f"{x:.1e}" if x else "0" for x in (r.logits, r.q, r.d, r.m, r.policy))
        lines.append(f"| {r.name} | {'yes' if r.planes_equal else 'NO'} | {figures} | {r.skipped} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lc0_dir", nargs="?", default="../shared/data/lc0", type=Path)
    args = parser.parse_args(argv)
    boards = reference_boards(args.lc0_dir / "reference")
    print(table([compare(args.lc0_dir, name, boards) for name in NETWORKS]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
