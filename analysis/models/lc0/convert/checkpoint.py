"""Converting an lc0 ``.pb.gz`` into an ordinary Sightline checkpoint (loaded back like any other).

The checkpoint is the usual safetensors file (``analysis.checkpoint``): family
``lc0-resnet`` or ``lc0-attention``, the config as JSON, ``input_encoding``
naming lc0's input format, and provenance with the source's SHA-256 and
format fields. Float16 storage halves the file; it is accepted only if the
network's answers on probe positions stay within ``FLOAT16_TOLERANCE``.
"""

from __future__ import annotations

from pathlib import Path

import chess
import torch

from analysis.checkpoint_file import CheckpointMeta, write_atomically
from analysis.errors import CheckpointError
from analysis.models.lc0.evaluate import evaluate_boards
from analysis.encoding.lc0_formats import encoding_name
from analysis.models.lc0.convert.load import from_lc0
from analysis.models.lc0.convert.reader import read_net
from analysis.models.lc0.model import build

FLOAT16_TOLERANCE = 1e-3
PROBE_FENS = (
    chess.STARTING_FEN,
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r3k2r/1p3ppp/8/8/8/8/PPP2PPP/R3K2R b Kq - 0 1",
    "8/P5k1/8/8/8/8/6K1/8 w - - 0 1",
    "2r3k1/1p3ppp/p7/8/8/P7/1P3PPP/2R3K1 b - - 0 30",
    "8/8/4k3/8/2K5/8/8/7R b - - 0 80",
)


def _probe(model) -> list:
    return evaluate_boards(model, [chess.Board(fen) for fen in PROBE_FENS])


def output_difference(a, b) -> float:
    """Largest difference of legal-move probabilities, WDL and q between two networks on the probes."""
    worst = 0.0
    for x, y in zip(_probe(a), _probe(b)):
        worst = max(worst, abs(x.q - y.q), *(abs(p - q) for p, q in zip(x.wdl, y.wdl)),
                    *(abs(x.policy[m] - y.policy[m]) for m in x.policy))
    return worst


def import_net(source: str | Path) -> tuple[torch.nn.Module, CheckpointMeta]:
    """The network of lc0 file ``source`` and the metadata its checkpoint gets, converted in memory."""
    source = Path(source)
    net = read_net(source)
    model = from_lc0(net)
    provenance = {"source": "lc0 network import", "file": source.name, "sha256": net.sha256, "bytes": net.size,
                  "license": net.license, "lc0_min_version": ".".join(map(str, net.min_version)),
                  "format": net.format.names(), "storage": "float32"}
    meta = CheckpointMeta(family=model.family, config=model.config.to_dict(),
                          input_encoding=encoding_name(model.config.input_format), trained=True,
                          provenance=provenance)
    return model, meta


def convert(source: str | Path, out: str | Path, *, float16: bool = False) -> Path:
    """Write ``out`` from lc0 net ``source``; the file appears whole or not at all."""
    source, out = Path(source), Path(out)
    model, meta = import_net(source)
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    if float16:
        tensors = {k: v.half() for k, v in tensors.items()}
        rounded = build(model.family, model.config)
        rounded.load_state_dict({k: v.float() for k, v in tensors.items()})
        diff = output_difference(model, rounded.eval())
        if diff > FLOAT16_TOLERANCE:
            raise CheckpointError(f"{source}: float16 storage changes outputs by {diff:.2g} "
                                  f"(over {FLOAT16_TOLERANCE}); convert without float16")
        meta.provenance.update(storage="float16", float16_max_output_difference=diff)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(out, tensors, meta)


__all__ = ["convert", "import_net", "output_difference"]
