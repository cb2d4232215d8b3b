"""The head grid of a BT4-sized lc0 attention body on this machine, and attribution vs exact ablation
on synthetic lc0 attention nets; one run.

    python bench/lens_bt4.py                 # BT4 grid (attribution + exact top 16) and the agreement
    python bench/lens_bt4.py --skip-bt4      # the agreement only

Figures (issue 28 targets in brackets):
- BT4 (15 layers x 32 heads, embedding 1024, lc0's ``bt4`` preset, random weights built in memory):
  wall time of one move's head grid, attribution patching over all 480 heads (one forward and one
  backward pass) then the top 16 re-measured by exact ablation in one batched pass [< 20 s on this
  CPU]; also one plain forward pass of the net, for scale;
- Spearman rank agreement between attribution and exact ablation over all heads of synthetic lc0
  attention nets written in lc0's own format (``tests/lc0_random_nets.py``), per position, for the
  network's top move.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import chess
import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.lens import core, lens_for  # noqa: E402
from analysis.models.lc0 import ATTENTION, build, load_lc0  # noqa: E402
from analysis.models.lc0.config import AttentionConfig  # noqa: E402
from analysis.models.lc0.presets import ATTENTION_PRESETS  # noqa: E402
from tests.lc0_random_nets import write_net  # noqa: E402

FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3",
        "r3k2r/pp1n1ppp/2p1pn2/q7/1bPP4/2N1PN2/PP1B1PPP/R2QKB1R w KQkq - 1 10",
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
        "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7"]
SYNTH = AttentionConfig(encoders=4, embed=64, heads=8, d_model=64, ffn=96, dense_features=8, embedding_ffn=96,
                        gates=True, smolgen_compress=4, smolgen_hidden=32, smolgen_gen=16, policy_embed=32,
                        policy_dim=32, shared_policy_embedding=True, value_channels=8, moves_left_channels=8,
                        moves_left_hidden=32, input_format=1)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = (np.argsort(np.argsort(x.ravel(), kind="stable")).astype(float) for x in (a, b))
    return float(np.corrcoef(ra, rb)[0, 1])


def top_move(lens, board: chess.Board) -> str:
    prepared = lens.prepare(board)
    with torch.no_grad():
        logits = lens.run(prepared)[1].logits[0]
    return prepared.moves[int(logits.argmax())].uci()


def bt4_grid(top: int) -> None:
    start = time.perf_counter()
    model = build(ATTENTION, ATTENTION_PRESETS["bt4"]).eval()
    lens = lens_for(model)
    params = sum(p.numel() for p in model.parameters())
    print(f"BT4 built in memory: {params / 1e6:.0f}M parameters, {time.perf_counter() - start:.1f} s")
    board = chess.Board(FENS[1])
    prepared = lens.prepare(board)
    forward = []
    for _ in range(2):
        t = time.perf_counter()
        with torch.no_grad():
            model(prepared.inputs)
        forward.append(time.perf_counter() - t)
    move = top_move(lens, board)
    t = time.perf_counter()
    grid = core.grid(lens, board, move, "head", top=top)
    seconds = time.perf_counter() - t
    exact = np.abs(grid.logit[grid.exact])
    print(f"plain forward pass: {min(forward):.2f} s")
    print(f"head grid {grid.logit.shape[0]} x {grid.logit.shape[1]} for {move}, attribution + exact top {top}: "
          f"{seconds:.1f} s [target < 20 s]; {int(grid.exact.sum())} exact cells, largest |change| {exact.max():.3g}")


def agreement(seeds: int) -> None:
    folder = Path(tempfile.mkdtemp())
    values = []
    for seed in range(seeds):
        lens = lens_for(load_lc0(write_net(folder / f"synth{seed}.pb.gz", SYNTH, seed=seed)))
        for fen in FENS:
            board = chess.Board(fen)
            move = top_move(lens, board)
            exact = core.grid(lens, board, move, "head")
            estimate = core.grid(lens, board, move, "head", top=0)
            values.append(spearman(estimate.attribution, exact.logit))
    print(f"synthetic lc0 attention ({SYNTH.encoders} x {SYNTH.heads} heads, smolgen), {seeds} nets x {len(FENS)} "
          f"positions: Spearman attribution vs exact over all heads: median {statistics.median(values):.3f}, "
          f"min {min(values):.3f}, max {max(values):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=16)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--skip-bt4", action="store_true")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    agreement(args.seeds)
    if not args.skip_bt4:
        bt4_grid(args.top)


if __name__ == "__main__":
    main()
