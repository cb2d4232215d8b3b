"""bf16 on a GPU against fp32 on the CPU: what a GPU worker shows against what a CPU worker shows.

    python bench/gpu_parity.py --out gpu_parity.json          # the shipped nets, 256 random positions

For each network the same positions (random legal play, 4 to 59 plies, seed 0) are evaluated by the
site's evaluator on the CPU (float32) and on cuda (bf16 autocast), and the differences reported:
expected score (max and mean absolute), the top policy move's agreement, the policy's total variation
distance, and the GPU batch's time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import chess
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.checkpoint import load_checkpoint  # noqa: E402
from analysis.models.inference import TorchEvaluator  # noqa: E402
from bench.inference import random_boards  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _tvd(a: dict, b: dict) -> float:
    return 0.5 * sum(abs(p - b.get(m, 0.0)) for m, p in a.items())


def compare(path: Path, boards: list[chess.Board], device: str) -> dict:
    """One network's CPU fp32 answers against the device's bf16 ones."""
    ref = TorchEvaluator(load_checkpoint(path)[0], device="cpu", name=path.stem).evaluate(boards)
    gpu = TorchEvaluator(load_checkpoint(path)[0], device=device, name=path.stem)
    gpu.evaluate(boards[:8])
    torch.cuda.synchronize()
    started = time.perf_counter()
    got = gpu.evaluate(boards)
    torch.cuda.synchronize()
    took = time.perf_counter() - started
    scores = [abs(a.score - b.score) for a, b in zip(ref, got)]
    pairs = [(a.policy, b.policy) for a, b in zip(ref, got) if a.policy]
    top = [max(a, key=a.get) == max(b, key=b.get) for a, b in pairs]
    tvd = [_tvd(a, b) for a, b in pairs]
    return {"positions": len(boards), "score_max_abs": max(scores), "score_mean_abs": float(np.mean(scores)),
            "top1_agree": float(np.mean(top)) if top else None,
            "policy_tvd_mean": float(np.mean(tvd)) if tvd else None,
            "policy_tvd_max": float(max(tvd)) if tvd else None, "gpu_batch_ms": took * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=[str(p) for p in sorted((ROOT / "weights").glob("*.safetensors"))],
                        help="checkpoints (default: every shipped network)")
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default=None, help="also write the report here (JSON)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: this bench compares a GPU against the CPU", file=sys.stderr)
        return 2
    boards = random_boards(args.positions)
    report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "nets": {}}
    for model in map(Path, args.models):
        try:
            report["nets"][model.stem] = compare(model, boards, args.device)
        except Exception as exc:  # one net's failure must not lose the others' figures
            report["nets"][model.stem] = {"error": repr(exc)}
        print(model.stem, report["nets"][model.stem], flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
