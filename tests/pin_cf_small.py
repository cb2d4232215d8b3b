"""Pin the shipped cf-small's outputs: ``python -m tests.pin_cf_small``.

Writes ``tests/data/cf_small_pins.npz``, keyed by the weights file's sha256,
which ``tests/test_family_pins.py`` compares to float32 rounding (not bit for
bit: another CPU's kernels sum in another order). Re-run it (and say why in the
commit) only when ``weights/cf-small.safetensors`` is retrained or the pinned
quantities change; a refactor must never need it.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import chess
import chess.pgn
import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "weights" / "cf-small.safetensors"
PINS = ROOT / "tests" / "data" / "cf_small_pins.npz"
PGN = ROOT / "bench" / "games" / "kasparov-topalov-1999.pgn"


def pin_boards() -> list[chess.Board]:
    """Eight varied positions: start, real history, black to move, promotion, castling, en passant."""
    game = chess.pgn.read_game(io.StringIO(PGN.read_text()))
    middlegame = game.board()
    for move in list(game.mainline_moves())[:41]:  # after 21. Rhe1: black to move, full history
        middlegame.push(move)
    white_middlegame = middlegame.copy()
    white_middlegame.pop()
    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")  # black to move, en passant square set
    ep = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    return [
        chess.Board(),
        middlegame,
        white_middlegame,
        after_e4,
        chess.Board("8/P5k1/8/8/8/8/5Kp1/8 w - - 0 60"),  # both sides promote next
        chess.Board("8/P5k1/8/8/8/8/5Kp1/8 b - - 0 60"),
        chess.Board("r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R b KQkq - 7 9"),
        ep,
    ]


def file_sha256(path: Path) -> str:
    """SHA-256 of the tensors (names, dtypes, shapes, bytes), not of the file.

    Attaching measured figures rewrites the file's metadata; the pins are about
    the weights, so only a change of weights (or config) asks for a re-pin.
    """
    from safetensors import safe_open

    from analysis.checkpoint import read_header

    digest = hashlib.sha256(json.dumps(read_header(path)[0].config, sort_keys=True).encode())
    with safe_open(str(path), framework="pt") as handle:
        for name in sorted(handle.keys()):
            tensor = handle.get_tensor(name).contiguous()
            digest.update(f"{name} {tensor.dtype} {list(tensor.shape)}".encode())
            digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


def compute_pins(evaluator, boards: list[chess.Board]) -> dict[str, np.ndarray]:
    """Raw outputs and decoded Evaluations, batched (8 >= the Shaw small-batch cut) and one at a time."""
    out: dict[str, np.ndarray] = {}
    for mode, batches in (("batch", [boards]), ("single", [[b] for b in boards])):
        evaluations = [e for batch in batches for e in evaluator.evaluate(batch, attention=True)]
        out[f"{mode}/score"] = np.array([e.score for e in evaluations])
        out[f"{mode}/wdl"] = np.array([e.wdl for e in evaluations])
        # (L, H, 64, 64) float32 maps are 786 kB a position: pin the mass each square receives
        # in every head, (L, H, 64), and each head's total.
        out[f"{mode}/attention_received"] = np.stack([e.attention.sum(axis=-2) for e in evaluations])
        out[f"{mode}/attention_sums"] = np.stack([e.attention.sum(axis=(-1, -2)) for e in evaluations])
        for i, e in enumerate(evaluations):
            moves = sorted(e.policy, key=lambda m: m.uci())
            out[f"{mode}/policy/{i}"] = np.array([e.policy[m] for m in moves])
            out[f"{mode}/moves/{i}"] = np.array([m.uci() for m in moves])
            out[f"{mode}/extras/{i}"] = np.array([e.extras[k] for k in sorted(e.extras)])
    return out


def raw_outputs(model: torch.nn.Module, tokens: torch.Tensor) -> dict[str, np.ndarray]:
    """Every raw output but attention (pinned decoded above), e.g. all 1858 policy logits."""
    with torch.inference_mode():
        raw = model(tokens)
    return {f"raw/{k}": v.numpy() for k, v in raw.items()}


def main() -> None:
    from analysis.checkpoint import load_checkpoint, load_evaluator
    from analysis.encoding import encode_tokens

    torch.set_num_threads(1)  # one reduction order, as the test uses
    boards = pin_boards()
    evaluator = load_evaluator(WEIGHTS, device="cpu")
    pins = compute_pins(evaluator, boards)
    model, _ = load_checkpoint(WEIGHTS)
    tokens = torch.from_numpy(encode_tokens(boards))
    pins.update(raw_outputs(model, tokens))
    pins["fens"] = np.array([b.fen() for b in boards])
    pins["weights_sha256"] = np.array(file_sha256(WEIGHTS))
    np.savez_compressed(PINS, **pins)
    print(f"wrote {PINS} ({PINS.stat().st_size} bytes) for {WEIGHTS.name} {pins['weights_sha256']}")


if __name__ == "__main__":
    main()
