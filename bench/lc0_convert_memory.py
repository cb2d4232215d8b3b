"""Peak memory of converting a BT4-sized lc0 net (issue 11: a 400 MB upload must not exhaust a worker).

    python bench/lc0_convert_memory.py                 # bt4 shape, float16 weights (~370 MB .pb.gz)
    python bench/lc0_convert_memory.py --preset bt-small --float16

Writes a synthetic ``.pb.gz`` of an ``lc0-attention`` preset's shape with random FLOAT16 weights, then
converts it (``analysis.models.lc0.convert``, what ``import-lc0`` and the upload check run) in a fresh
process and prints that process's peak RSS above its RSS after imports, with the wall time. The file
is written by running the importer's own reads backwards: every layer it asks for (field, shape) is
filled with random values of that shape, so the file has exactly the layers and sizes the importer
expects of that config. Random weights cost the same memory as trained ones.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.models.lc0.convert import import_attention, tensors  # noqa: E402
from analysis.models.lc0.presets import ATTENTION_PRESETS  # noqa: E402
from analysis.models.lc0.convert.proto import net_class  # noqa: E402
from analysis.models.lc0.convert.reader import ACTIVATIONS, MAGIC  # noqa: E402

FLOAT16 = 2  # lc0's Layer.Encoding FLOAT16


def synthetic_net(config, seed: int = 0):
    """A ``pblczero.Net`` message of ``config``'s shape (multi-head format, as BT4's: vanilla policy and
    winner value heads), random weights; also the number of parameters written."""
    net = net_class()()
    net.magic, net.min_version.major, net.min_version.minor = MAGIC, 0, 33
    activation = {name.lower(): value for value, name in ACTIVATIONS.items()}
    fmt = net.format.network_format
    fmt.input, fmt.output, fmt.network, fmt.policy = config.input_format, 2, 7, 3
    fmt.value, fmt.moves_left = (2 if config.wdl else 1), (1 if config.moves_left_channels else 0)
    fmt.default_activation = 1 if config.activation == "mish" else 0
    fmt.ffn_activation, fmt.smolgen_activation = activation[config.ffn_activation], activation[config.smolgen_activation]
    fmt.input_embedding = 2 if config.embedding == "pe_dense" else 1
    net.format.weights_encoding = FLOAT16
    weights = net.weights
    weights.headcount = config.heads
    for _ in range(config.encoders):
        weights.encoder.add()
    weights.policy_heads.vanilla.SetInParent()
    weights.value_heads.winner.SetInParent()
    rng = np.random.default_rng(seed)

    def fill(message, field, shape, path):
        layer = getattr(message, field)
        count = math.prod(shape)
        layer.params = (rng.standard_normal(count, dtype=np.float32) * 0.02).astype("<f2").tobytes()
        layer.encoding = FLOAT16
        return torch.empty(shape, device="meta")  # only its shape is used

    with mock.patch.object(tensors, "take", fill), mock.patch.object(import_attention, "take", fill):
        state = import_attention.attention_state(SimpleNamespace(weights=weights, format=fmt), config)
    return net, sum(t.numel() for t in state.values())


CHILD = """
import json, sys, time
from pathlib import Path
from analysis.models.lc0.convert import convert

def rss(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
baseline, start = rss("VmRSS:"), time.perf_counter()
convert(Path(sys.argv[1]), Path(sys.argv[2]), float16=sys.argv[3] == "1")
print(json.dumps({"baseline": baseline, "peak": rss("VmHWM:"), "seconds": time.perf_counter() - start}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="bt4", choices=sorted(ATTENTION_PRESETS))
    parser.add_argument("--float16", action="store_true", help="convert with --float16 (adds the probe's copy)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"{args.preset}.pb.gz"
        start = time.perf_counter()
        net, parameters = synthetic_net(ATTENTION_PRESETS[args.preset])
        with gzip.open(source, "wb", compresslevel=1) as f:
            f.write(net.SerializeToString())
        del net
        size = source.stat().st_size
        print(f"{args.preset}: {parameters:,} parameters, {size / 1e6:.0f} MB .pb.gz "
              f"(written in {time.perf_counter() - start:.0f} s)")
        out = subprocess.run([sys.executable, "-c", CHILD, str(source), str(Path(tmp) / "out.safetensors"),
                              "1" if args.float16 else "0"], cwd=ROOT, capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-2000:], file=sys.stderr)
            return 1
        figures = json.loads(out.stdout.splitlines()[-1])
    added = figures["peak"] - figures["baseline"]
    print(f"conversion{' --float16' if args.float16 else ''}: {figures['seconds']:.0f} s, peak RSS "
          f"{figures['peak'] / 2**30:.2f} GiB = baseline {figures['baseline'] / 2**20:.0f} MiB + "
          f"{added / 2**30:.2f} GiB ({added / size:.1f} x the file)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
