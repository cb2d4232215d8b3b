"""The ``pblczero.Net`` protobuf schema, built in Python (no protoc at install time).

Field numbers are those of lc0's ``proto/net.proto``. Only what the importer
reads is declared; anything else in a file is kept as unknown fields and
ignored. Enum-valued fields are declared ``uint32`` (same wire type), so an
unknown value reaches us as a number we can name in an error instead of
vanishing into unknown fields as proto2 enums would.
"""

from __future__ import annotations

from functools import lru_cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "sightline.lc0"
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"float": _F.TYPE_FLOAT, "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32,
            "fixed32": _F.TYPE_FIXED32, "string": _F.TYPE_STRING}

# message -> [(field, number, type, repeated)]; a type not in _SCALARS names a message.
_LAYER_FIELDS = ("weights", "biases", "bn_means", "bn_stddivs", "bn_gammas", "bn_betas")
SCHEMA: dict[str, list[tuple[str, int, str, bool]]] = {
    "EngineVersion": [("major", 1, "uint32", False), ("minor", 2, "uint32", False), ("patch", 3, "uint32", False)],
    "Layer": [("min_val", 1, "float", False), ("max_val", 2, "float", False), ("params", 3, "bytes", False),
              ("encoding", 4, "uint32", False), ("dims", 5, "uint32", True)],
    "ConvBlock": [(name, i + 1, "Layer", False) for i, name in enumerate(_LAYER_FIELDS)],
    "SEunit": [("w1", 1, "Layer", False), ("b1", 2, "Layer", False), ("w2", 3, "Layer", False),
               ("b2", 4, "Layer", False)],
    "Residual": [("conv1", 1, "ConvBlock", False), ("conv2", 2, "ConvBlock", False), ("se", 3, "SEunit", False)],
    "Smolgen": [(name, i + 1, "Layer", False) for i, name in enumerate(
        ("compress", "dense1_w", "dense1_b", "ln1_gammas", "ln1_betas", "dense2_w", "dense2_b",
         "ln2_gammas", "ln2_betas"))],
    "MHA": [(name, i + 1, "Layer", False) for i, name in enumerate(
        ("q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "dense_w", "dense_b"))]
        + [("smolgen", 9, "Smolgen", False), ("rpe_q", 10, "Layer", False), ("rpe_k", 11, "Layer", False),
           ("rpe_v", 12, "Layer", False)],
    "FFN": [(name, i + 1, "Layer", False) for i, name in enumerate(("dense1_w", "dense1_b", "dense2_w", "dense2_b"))],
    "EncoderLayer": [("mha", 1, "MHA", False), ("ln1_gammas", 2, "Layer", False), ("ln1_betas", 3, "Layer", False),
                     ("ffn", 4, "FFN", False), ("ln2_gammas", 5, "Layer", False), ("ln2_betas", 6, "Layer", False)],
    "PolicyHead": [(name, i + 1, "Layer", False) for i, name in enumerate(
        ("ip_pol_w", "ip_pol_b", "ip2_pol_w", "ip2_pol_b", "ip3_pol_w", "ip3_pol_b", "ip4_pol_w"))]
        + [("pol_encoder", 8, "EncoderLayer", True), ("pol_headcount", 9, "uint32", False),
           ("policy1", 10, "ConvBlock", False), ("policy", 11, "ConvBlock", False)],
    "ValueHead": [(name, i + 1, "Layer", False) for i, name in enumerate(
        ("ip_val_w", "ip_val_b", "ip1_val_w", "ip1_val_b", "ip2_val_w", "ip2_val_b",
         "ip_val_err_w", "ip_val_err_b", "ip_val_cat_w", "ip_val_cat_b"))] + [("value", 11, "ConvBlock", False)],
    "PolicyHeadMap": [("key", 1, "string", False), ("value", 2, "PolicyHead", False)],
    "PolicyHeads": [("ip_pol_w", 1, "Layer", False), ("ip_pol_b", 2, "Layer", False),
                    ("vanilla", 3, "PolicyHead", False), ("optimistic_st", 4, "PolicyHead", False),
                    ("soft", 5, "PolicyHead", False), ("opponent", 6, "PolicyHead", False),
                    ("policy_head_map", 7, "PolicyHeadMap", True)],
    "ValueHeadMap": [("key", 1, "string", False), ("value", 2, "ValueHead", False)],
    "ValueHeads": [("winner", 1, "ValueHead", False), ("q", 2, "ValueHead", False), ("st", 3, "ValueHead", False),
                   ("value_head_map", 4, "ValueHeadMap", True)],
    "Weights": [
        ("input", 1, "ConvBlock", False), ("residual", 2, "Residual", True),
        ("ip_emb_preproc_w", 37, "Layer", False), ("ip_emb_preproc_b", 38, "Layer", False),
        ("ip_emb_w", 25, "Layer", False), ("ip_emb_b", 26, "Layer", False),
        ("ip_emb_ln_gammas", 39, "Layer", False), ("ip_emb_ln_betas", 40, "Layer", False),
        ("ip_mult_gate", 33, "Layer", False), ("ip_add_gate", 34, "Layer", False),
        ("ip_emb_ffn", 41, "FFN", False), ("ip_emb_ffn_ln_gammas", 42, "Layer", False),
        ("ip_emb_ffn_ln_betas", 43, "Layer", False),
        ("encoder", 27, "EncoderLayer", True), ("headcount", 28, "uint32", False),
        ("pol_encoder", 21, "EncoderLayer", True), ("pol_headcount", 24, "uint32", False),
        ("policy1", 11, "ConvBlock", False), ("policy", 3, "ConvBlock", False),
        ("ip_pol_w", 4, "Layer", False), ("ip_pol_b", 5, "Layer", False),
        ("ip2_pol_w", 17, "Layer", False), ("ip2_pol_b", 18, "Layer", False),
        ("ip3_pol_w", 19, "Layer", False), ("ip3_pol_b", 20, "Layer", False), ("ip4_pol_w", 22, "Layer", False),
        ("value", 6, "ConvBlock", False), ("ip_val_w", 29, "Layer", False), ("ip_val_b", 30, "Layer", False),
        ("ip1_val_w", 7, "Layer", False), ("ip1_val_b", 8, "Layer", False),
        ("ip2_val_w", 9, "Layer", False), ("ip2_val_b", 10, "Layer", False),
        ("value_heads", 44, "ValueHeads", False), ("policy_heads", 45, "PolicyHeads", False),
        ("moves_left", 12, "ConvBlock", False), ("ip_mov_w", 31, "Layer", False), ("ip_mov_b", 32, "Layer", False),
        ("ip1_mov_w", 13, "Layer", False), ("ip1_mov_b", 14, "Layer", False),
        ("ip2_mov_w", 15, "Layer", False), ("ip2_mov_b", 16, "Layer", False),
        ("smolgen_w", 35, "Layer", False), ("smolgen_b", 36, "Layer", False),
    ],
    "NetworkFormat": [(name, i + 1, "uint32", False) for i, name in enumerate(
        ("input", "output", "network", "policy", "value", "moves_left", "default_activation",
         "smolgen_activation", "ffn_activation", "input_embedding"))],
    "Format": [("weights_encoding", 1, "uint32", False), ("network_format", 2, "NetworkFormat", False)],
    "Net": [("magic", 1, "fixed32", False), ("license", 2, "string", False),
            ("min_version", 3, "EngineVersion", False), ("format", 4, "Format", False),
            ("weights", 10, "Weights", False), ("onnx_model", 11, "bytes", False)],
}


def _message(name: str, fields: list[tuple[str, int, str, bool]]) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=name)
    for field_name, number, kind, repeated in fields:
        field = message.field.add(name=field_name, number=number,
                                  label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
        if kind in _SCALARS:
            field.type = _SCALARS[kind]
        else:
            field.type, field.type_name = _F.TYPE_MESSAGE, f".{PACKAGE}.{kind}"
    return message


@lru_cache(maxsize=1)
def net_class() -> type:
    """The message class for a whole ``.pb`` file (``pblczero.Net``)."""
    file = descriptor_pb2.FileDescriptorProto(name="sightline_lc0_net.proto", package=PACKAGE, syntax="proto2")
    file.message_type.extend(_message(name, fields) for name, fields in SCHEMA.items())
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.Net"))
