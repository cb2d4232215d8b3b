"""Lc0 files that unpack to gigabytes are refused while they stream in, in words, in bounded memory."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.errors import CheckpointError, NetworkTooLarge
from analysis.models.lc0.convert.proto import net_class
from analysis.models.lc0.convert.reader import parse_net, read_net
from tests.conftest import require_shared_data
from tests.lc0_bombs import MIB, declared_tensor_bomb, gzip_of, zeros_bomb

ROOT = Path(__file__).resolve().parent.parent
# Refusing either bomb keeps one compressed and one unpacked window (1 MiB each) and the
# inflater's state: 32 MiB of peak growth is that with room for the allocator.
REFUSAL_BOUND_MIB = 32
_MEASURE = """
import json, resource, sys, time
from analysis.models.lc0.convert.reader import read_net
from analysis.errors import NetworkTooLarge
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_net(sys.argv[1])
    refusal = None
except NetworkTooLarge as exc:
    refusal = str(exc)
print(json.dumps({"refusal": refusal,
                  "growth_mib": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}))
"""


def test_the_bombs_are_what_they_claim():
    net = net_class()()
    net.ParseFromString(gzip.decompress(declared_tensor_bomb(mib=2)))
    assert net.magic == 0x1C0 and len(net.weights.input.weights.params) == 2 * MIB
    assert gzip.decompress(zeros_bomb(mib=3)) == bytes(3 * MIB)


@pytest.mark.parametrize("make, words", [
    (zeros_bomb, "the network unpacks to more than 2 GiB"),
    (declared_tensor_bomb, "the network declares weights of 3 GiB: it unpacks to more than 2 GiB"),
])
def test_a_3_gib_bomb_is_refused_in_words_with_bounded_memory(tmp_path, make, words):
    path = tmp_path / "bomb.pb.gz"
    path.write_bytes(make())  # 3 GiB unpacked, about 3 MB on disk
    run = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True)
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert answer["refusal"] == f"{path}: {words}"
    assert answer["growth_mib"] < REFUSAL_BOUND_MIB


def test_the_limit_is_counted_while_unpacking(monkeypatch):
    monkeypatch.setattr("analysis.models.lc0.convert.reader.MAX_UNPACKED", 8 * MIB)
    with pytest.raises(NetworkTooLarge, match="unpacks to more than 8 MiB"):
        parse_net(zeros_bomb(mib=64))
    with pytest.raises(NetworkTooLarge, match="declares weights of 64 MiB: it unpacks to more than 8 MiB"):
        parse_net(declared_tensor_bomb(mib=64))
    # Under the limit, zeros are only what they are: not an lc0 network.
    with pytest.raises(CheckpointError, match="not gzip or protobuf") as refused:
        parse_net(zeros_bomb(mib=4))
    assert not isinstance(refused.value, NetworkTooLarge)


def test_a_field_that_runs_past_its_message_is_damaged_data_not_a_size():
    lying = b"\x0d" + (0x1C0).to_bytes(4, "little") + b"\x52\x05" + b"\x0a\x7f" + bytes(3)  # input says 127 bytes
    with pytest.raises(CheckpointError, match="runs past its message") as refused:
        parse_net(gzip_of(lying, 0))
    assert not isinstance(refused.value, NetworkTooLarge)


def test_an_over_limit_file_is_a_checkpoint_error_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr("analysis.models.lc0.convert.reader.MAX_UNPACKED", 8 * MIB)
    path = tmp_path / "big.pb.gz"
    path.write_bytes(zeros_bomb(mib=16))
    with pytest.raises(NetworkTooLarge, match=f"^{path}: the network unpacks to more than 8 MiB$"):
        read_net(path)
    assert issubclass(NetworkTooLarge, CheckpointError)  # the site shows a CheckpointError's words


def test_describe_reads_an_lc0_net(capsys):
    path = require_shared_data("lc0/maia-1100.pb.gz")
    assert main(["describe", "--model", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["family"] == "lc0-resnet" and info["trained"] is True
    assert info["input_encoding"] == "lc0/INPUT_CLASSICAL_112_PLANE" and info["parameters"] > 800_000
    assert info["provenance"]["sha256"] == read_net(path).sha256
