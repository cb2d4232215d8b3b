"""Inference speed and model FLOP utilisation (MFU) of any registered family.

    python bench/inference.py                       # cf-6m on the CPU, batches 1, 64, 256
    python bench/inference.py --device cuda --dtype bf16 --preset cf-240m --batches 1024
    python bench/inference.py --model weights/maia-1100.safetensors --batches 256   # an imported SE-ResNet
    python bench/inference.py --family lc0-attention --preset bt-small --batches 256  # synthetic, random weights
    python bench/inference.py --family chessbench --preset cb-9m --batches 256  # action values: rows per move

MFU = (model FLOPs per position x positions/s) / (this machine's dense matmul FLOP/s
in the same dtype, measured in the same run). Targets: >= 0.5 for cf-6m at batch 256
on the CPU in fp32; >= 0.4 for cf-240m at batch 1024 in bf16 on a GPU.
Model FLOPs are counted by torch.utils.flop_counter on one forward pass.
Positions/s is reported for the network alone and end to end (python-chess boards
-> encoding -> network -> legal-move policies). A batch is the network's input rows;
where a family feeds one row per legal move (ChessBench action values), positions/s
is rows/s divided by the mean rows per position (printed as rows/pos).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import chess
import torch
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.checkpoint import load_checkpoint  # noqa: E402
from analysis.models.inference import TorchEvaluator  # noqa: E402
from analysis.models import DEFAULT_FAMILY, get_family  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, device, min_time: float = 1.0, min_runs: int = 3) -> float:
    """Median seconds per call after one warm-up call."""
    fn()
    sync(device)
    samples, total = [], 0.0
    while total < min_time or len(samples) < min_runs:
        start = time.perf_counter()
        fn()
        sync(device)
        samples.append(time.perf_counter() - start)
        total += samples[-1]
    return statistics.median(samples)


def matmul_peak(device: torch.device, dtype: torch.dtype, n: int) -> float:
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    seconds = timed(lambda: a @ b, device)
    return 2 * n**3 / seconds


def random_boards(count: int, seed: int = 0) -> list[chess.Board]:
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = chess.Board()
        for _ in range(rng.randrange(4, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over():
            boards.append(board)
    return boards


def build_model(args) -> tuple[torch.nn.Module, str, str]:
    """(network, its description, its encoding): a checkpoint or ``.pb.gz``, else a preset with random weights."""
    if args.model:
        model, meta = load_checkpoint(args.model)
        return model, f"{Path(args.model).name} ({meta.family})", meta.input_encoding
    family = get_family(args.family)
    torch.manual_seed(0)
    config = family.preset(args.preset or family.default_preset)
    return family.build(config), f"{family.name} {args.preset or family.default_preset}", family.encoding_of(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default=DEFAULT_FAMILY, help="a registered family (random weights)")
    parser.add_argument("--preset", default=None, help="the family's preset (default: cf-6m for chessformer)")
    parser.add_argument("--model", default=None, help="a checkpoint or imported network file instead")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="fp32", choices=sorted(DTYPES))
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 256])
    parser.add_argument("--matmul-size", type=int, default=2048)
    args = parser.parse_args()

    if args.preset is None and args.model is None and args.family == "chessformer":
        args.preset = "cf-6m"
    device = torch.device(args.device)
    dtype = DTYPES[args.dtype]
    model, described, encoding = build_model(args)
    model = model.to(device).eval()
    if dtype != torch.float32:
        model = model.to(dtype)
    peak = matmul_peak(device, dtype, args.matmul_size)
    print(f"{described}: {sum(p.numel() for p in model.parameters()):,} parameters; device {device}, "
          f"{args.dtype}, {torch.get_num_threads()} threads")
    print(f"dense {args.matmul_size}^3 matmul: {peak / 1e9:,.1f} GFLOP/s (the MFU denominator)")

    boards = random_boards(max(args.batches))
    evaluator = TorchEvaluator(model, device=device, encoding=encoding)
    rows = evaluator.family.network_inputs(boards, evaluator.encoding, model.config)
    per_position = len(rows) / len(boards)
    print(f"{'batch':>6} {'rows/pos':>8} {'net pos/s':>11} {'end-to-end pos/s':>17} {'GFLOP/pos':>10} {'MFU':>6}")
    for batch in args.batches:
        tokens = torch.from_numpy(rows[:batch])
        tokens = tokens.to(device, dtype) if tokens.is_floating_point() else tokens.to(device)
        with FlopCounterMode(display=False) as counter, torch.inference_mode():
            model(tokens)
        flops_per_position = counter.get_total_flops() / len(tokens) * per_position
        positions = max(1, round(len(tokens) / per_position))  # the boards that many rows make

        def forward():
            with torch.inference_mode():
                model(tokens)

        net_seconds = timed(forward, device)
        end_to_end = timed(lambda: evaluator.evaluate(boards[:positions]), device)
        positions_per_s = len(tokens) / net_seconds / per_position
        mfu = flops_per_position * positions_per_s / peak
        print(f"{len(tokens):>6} {per_position:>8.1f} {positions_per_s:>11,.1f} {positions / end_to_end:>17,.1f} "
              f"{flops_per_position / 1e9:>10.4f} {mfu:>6.2f}")


if __name__ == "__main__":
    main()
