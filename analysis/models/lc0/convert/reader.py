"""Reading an lc0 ``.pb.gz`` file: gzip, protobuf, header checks, format normalisation.

Follows lc0's ``ParseWeightsProto`` and ``FixOlderWeightsFile``
(``src/neural/loader.cc``): the magic must be 0x1c0, the net's minimum engine
version must not be newer than the lc0 release whose format we implement, and
old headers are rewritten to the modern network/policy/value formats before
anything looks at them. Every failure is one ``CheckpointError`` naming the
field and value at fault.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from pathlib import Path

from analysis.encoding.lc0_formats import INPUT_FORMATS
from analysis.errors import CheckpointError
from analysis.models.lc0.convert.proto import net_class
from analysis.models.lc0.convert.unpacking import MAX_UNPACKED, unpack_into
from analysis.models.lc0.convert.weights import LINEAR16

MAGIC = 0x1C0
SUPPORTED_VERSION = (0, 33)  # lc0 v0.33: the newest format fields we read (per-layer FP32 encoding)

# NetworkFormat enum values (lc0 proto/net.proto); the input formats' are the encodings'.
OUTPUTS = {1: "OUTPUT_CLASSICAL", 2: "OUTPUT_WDL"}
NETWORKS = {3: "NETWORK_CLASSICAL_WITH_HEADFORMAT", 4: "NETWORK_SE_WITH_HEADFORMAT",
            6: "NETWORK_ATTENTIONBODY_WITH_HEADFORMAT", 7: "NETWORK_ATTENTIONBODY_WITH_MULTIHEADFORMAT"}
POLICIES = {1: "POLICY_CLASSICAL", 2: "POLICY_CONVOLUTION", 3: "POLICY_ATTENTION"}
VALUES = {1: "VALUE_CLASSICAL", 2: "VALUE_WDL"}
MOVES_LEFT = {0: "MOVES_LEFT_NONE", 1: "MOVES_LEFT_V1"}
DEFAULT_ACTIVATIONS = {0: "RELU", 1: "MISH"}
ACTIVATIONS = {0: "DEFAULT", 1: "MISH", 2: "RELU", 3: "NONE", 4: "TANH", 5: "SIGMOID", 6: "SELU", 7: "SWISH",
               8: "RELU_2", 9: "SOFTMAX"}
EMBEDDINGS = {0: "NONE", 1: "PE_MAP", 2: "PE_DENSE"}
_FIELDS = {"input": INPUT_FORMATS, "output": OUTPUTS, "network": NETWORKS, "policy": POLICIES, "value": VALUES,
           "moves_left": MOVES_LEFT, "default_activation": DEFAULT_ACTIVATIONS, "smolgen_activation": ACTIVATIONS,
           "ffn_activation": ACTIVATIONS, "input_embedding": EMBEDDINGS}


@dataclass(frozen=True)
class NetFormat:
    """The normalised ``NetworkFormat``, as lc0 numbers (see the name tables above)."""

    input: int
    output: int
    network: int
    policy: int
    value: int
    moves_left: int
    default_activation: int
    smolgen_activation: int
    ffn_activation: int
    input_embedding: int

    def names(self) -> dict[str, str]:
        """Every field by its lc0 enum name, for provenance and messages."""
        return {key: _FIELDS[key][value] for key, value in asdict(self).items()}

    @property
    def attention_body(self) -> bool:
        return self.network in (6, 7)


@dataclass
class Lc0File:
    """A parsed, checked net: the protobuf ``Weights`` message and its normalised format."""

    weights: object  # the Weights protobuf message
    format: NetFormat
    min_version: tuple[int, int, int]
    license: str
    sha256: str
    size: int


def read_net(path: str | Path) -> Lc0File:
    """Parse and check an lc0 ``.pb.gz`` (or uncompressed ``.pb``) file.

    The file is hashed and unpacked as it streams in, within ``MAX_UNPACKED``
    (``analysis.models.lc0.convert.unpacking`` states the memory it takes).
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            net, digest = _unpack(f)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read ({exc.strerror})") from None
    except CheckpointError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    try:
        return _check(net, digest, path.stat().st_size)
    except CheckpointError as exc:
        raise CheckpointError(f"{path}: {exc}") from None


def parse_net(raw: bytes) -> Lc0File:
    """Checks as ``read_net``, on the file's bytes."""
    net, digest = _unpack(io.BytesIO(raw))
    return _check(net, digest, len(raw))


def _unpack(f) -> tuple[object, str]:
    net = net_class()()
    digest = unpack_into(net, f, MAX_UNPACKED)
    return net, digest.hexdigest()


def _check(net, digest: str, size: int) -> Lc0File:
    if net.magic != MAGIC:
        raise CheckpointError(f"not an lc0 network: magic is {net.magic:#x}, expected {MAGIC:#x}")
    version = (net.min_version.major, net.min_version.minor, net.min_version.patch)
    if version[:2] > SUPPORTED_VERSION:
        raise CheckpointError(f"the net needs lc0 {'.'.join(map(str, version))}; this importer reads formats up to "
                              f"lc0 {'.'.join(map(str, SUPPORTED_VERSION))}")
    if net.HasField("onnx_model") and not net.HasField("weights"):
        raise CheckpointError("ONNX lc0 networks (Net.onnx_model) are not supported; use the .pb.gz weights file")
    if not net.HasField("weights"):
        raise CheckpointError("the file holds no weights (field Net.weights)")
    encoding = net.format.weights_encoding
    if encoding != LINEAR16 and version[:2] < (0, 33):
        raise CheckpointError(f"unknown value {encoding} of field Format.weights_encoding (lc0 "
                              f"{'.'.join(map(str, version))} nets must use LINEAR16)")
    fmt = normalise_format(net.format, net.weights)
    return Lc0File(weights=net.weights, format=fmt, min_version=version, license=net.license, sha256=digest,
                   size=size)


def normalise_format(fmt, weights) -> NetFormat:
    """lc0's ``FixOlderWeightsFile``, then a check that we know every field's value."""
    values = {key: getattr(fmt.network_format, key) for key in _FIELDS}
    if not fmt.HasField("network_format"):
        values.update(input=1, output=1, network=3, policy=1, value=1)
    elif values["network"] in (1, 2):  # NETWORK_CLASSICAL, NETWORK_SE: heads were implied
        values.update(network=values["network"] + 2, policy=1, value=1)
    elif values["network"] == 4 and len(weights.encoder):  # an attention body under the SE label
        values["network"] = 6
        if weights.HasField("smolgen_w"):
            values.update(ffn_activation=8, smolgen_activation=7)  # RELU_2, SWISH
    elif values["network"] == 134:  # NETWORK_AB_LEGACY_WITH_MULTIHEADFORMAT
        values["network"] = 7
    if values["network"] == 6 and weights.HasField("policy_heads") and weights.HasField("value_heads"):
        values.update(network=7, input_embedding=2)
    if values["network"] == 6 and not fmt.network_format.HasField("input_embedding"):
        values["input_embedding"] = 1
    for key, table in _FIELDS.items():
        if values[key] not in table:
            raise CheckpointError(f"unsupported net format: field NetworkFormat.{key} has value {values[key]}, "
                                  f"this importer knows {', '.join(f'{v} ({n})' for v, n in sorted(table.items()))}")
    return NetFormat(**values)
