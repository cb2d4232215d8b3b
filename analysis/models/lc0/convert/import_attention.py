"""Config and state dict of an ``Lc0Attention`` from a parsed lc0 file.

Single-head nets (NETWORK_ATTENTIONBODY_WITH_HEADFORMAT) keep their policy
and value weights on ``Weights`` itself; they become the "vanilla" policy and
"winner" value heads. Multi-head nets name theirs in ``policy_heads`` /
``value_heads`` (fields and map entries).
"""

from __future__ import annotations

from analysis.encoding.lc0_planes import PLANES
from analysis.errors import CheckpointError
from analysis.models.lc0.activations import resolve
from analysis.models.lc0.config import AttentionConfig
from analysis.models.lc0.convert.reader import ACTIVATIONS, Lc0File
from analysis.models.lc0.convert.tensors import linear, present, prefixed, size, take

POLICY_FIELDS = ("vanilla", "optimistic_st", "soft", "opponent")
VALUE_FIELDS = ("winner", "q", "st")


def _named(container, fields: tuple[str, ...], path: str) -> dict[str, tuple[object, str]]:
    heads = {name: (getattr(container, name), f"{path}.{name}") for name in fields if container.HasField(name)}
    entries = container.policy_head_map if hasattr(container, "policy_head_map") else container.value_head_map
    for entry in entries:
        heads.setdefault(entry.key, (entry.value, f"{path}[{entry.key}]"))
    return heads


def policy_heads(net: Lc0File) -> dict[str, tuple[object, str]]:
    w = net.weights
    return _named(w.policy_heads, POLICY_FIELDS, "policy_heads") if net.format.network == 7 else {"vanilla": (w, "")}


def value_heads(net: Lc0File) -> dict[str, tuple[object, str]]:
    w = net.weights
    return _named(w.value_heads, VALUE_FIELDS, "value_heads") if net.format.network == 7 else {"winner": (w, "")}


def _same(sizes: dict[str, tuple], what: str) -> tuple:
    if not sizes:
        raise CheckpointError(f"missing weights: the net has no {what} head")
    if len(set(sizes.values())) > 1:
        raise CheckpointError(f"{what} heads of different sizes are not supported: {sizes}")
    return next(iter(sizes.values()))


def attention_config(net: Lc0File) -> AttentionConfig:
    w, fmt = net.weights, net.format
    if fmt.input_embedding == 0 or not len(w.encoder):
        raise CheckpointError("unsupported net format: an attention body needs encoders and an input embedding "
                              f"(field NetworkFormat.input_embedding = {fmt.input_embedding})")
    if fmt.policy != 3:
        raise CheckpointError(f"unsupported net format: field NetworkFormat.policy = {fmt.policy} with an "
                              "attention body (only POLICY_ATTENTION is known)")
    if len(w.residual):
        raise CheckpointError("unsupported net format: hybrid nets (residual blocks before the encoders)")
    if fmt.input_embedding == 2 and not w.HasField("ip_emb_ffn"):
        raise CheckpointError("unsupported net: a dense input embedding (INPUT_EMBEDDING_PE_DENSE) without its FFN "
                              "(field ip_emb_ffn), which lc0 runs for every such net")
    E, enc0 = size(w, "ip_emb_b", ""), w.encoder[0]
    default = "mish" if fmt.default_activation == 1 else "relu"
    shared = net.format.network == 7 and present(w.policy_heads, "ip_pol_w")
    pol = _same({n: ((size(w.policy_heads, "ip_pol_b", "policy_heads") if shared else size(h, "ip_pol_b", p)),
                     size(h, "ip2_pol_b", p), len(h.pol_encoder), h.pol_headcount,
                     size(h.pol_encoder[0].ffn, "dense1_b", p) if len(h.pol_encoder) else 0)
                 for n, (h, p) in policy_heads(net).items()}, "policy")
    val = _same({n: (size(h, "ip_val_b", p), size(h, "ip1_val_b", p)) for n, (h, p) in value_heads(net).items()},
                "value")
    smolgen = enc0.mha.HasField("smolgen")
    mlh = fmt.moves_left == 1 and present(w, "ip_mov_w")
    return AttentionConfig(
        encoders=len(w.encoder), embed=E, heads=w.headcount, d_model=size(enc0.mha, "q_b", "encoder.0.mha"),
        ffn=size(enc0.ffn, "dense1_b", "encoder.0.ffn"),
        embedding="pe_dense" if fmt.input_embedding == 2 else "pe_map",
        dense_features=size(w, "ip_emb_preproc_b", "") // 64 if fmt.input_embedding == 2 else 0,
        embedding_ffn=size(w.ip_emb_ffn, "dense1_b", "ip_emb_ffn") if w.HasField("ip_emb_ffn") else 0,
        gates=present(w, "ip_mult_gate") and present(w, "ip_add_gate"),
        smolgen_compress=size(enc0.mha.smolgen, "compress", "encoder.0.mha.smolgen") // E if smolgen else 0,
        smolgen_hidden=size(enc0.mha.smolgen, "dense1_b", "encoder.0.mha.smolgen") if smolgen else 0,
        smolgen_gen=size(w, "smolgen_w", "") // 4096 if smolgen else 0,
        activation=default, ffn_activation=resolve(ACTIVATIONS[fmt.ffn_activation].lower(), default),
        smolgen_activation=resolve(ACTIVATIONS[fmt.smolgen_activation].lower(), default),
        policy_heads=tuple(policy_heads(net)), policy_head="vanilla" if "vanilla" in policy_heads(net) else next(
            iter(policy_heads(net))),
        shared_policy_embedding=shared, policy_embed=pol[0], policy_dim=pol[1], policy_encoders=pol[2],
        policy_encoder_heads=pol[3], policy_encoder_ffn=pol[4],
        value_heads=tuple(value_heads(net)), value_head="winner" if "winner" in value_heads(net) else next(
            iter(value_heads(net))),
        wdl=fmt.value == 2, value_channels=val[0], value_hidden=val[1],
        moves_left_channels=size(w, "ip_mov_b", "") if mlh else 0,
        moves_left_hidden=size(w, "ip1_mov_b", "") if mlh else 0, input_format=fmt.input)


def _layer_norm(message, field: str, n: int, path: str) -> dict:
    return {"weight": take(message, f"{field}_gammas", (n,), path), "bias": take(message, f"{field}_betas", (n,), path)}


def _ffn(message, embed: int, hidden: int, path: str) -> dict:
    return {**prefixed("dense1", linear(message, "dense1_w", "dense1_b", hidden, embed, path)),
            **prefixed("dense2", linear(message, "dense2_w", "dense2_b", embed, hidden, path))}


def _encoder(layer, c: AttentionConfig, embed: int, d_model: int, ffn: int, path: str, smolgen: bool) -> dict:
    mha, mp = layer.mha, f"{path}.mha"
    state = {}
    for name in ("q", "k", "v"):
        state.update(prefixed(f"mha.{name}", linear(mha, f"{name}_w", f"{name}_b", d_model, embed, mp)))
    state.update(prefixed("mha.dense", linear(mha, "dense_w", "dense_b", embed, d_model, mp)))
    if smolgen:
        s, sp, hc, hid = mha.smolgen, f"{mp}.smolgen", c.smolgen_compress, c.smolgen_hidden
        state["mha.smolgen.compress.weight"] = take(s, "compress", (hc, embed), sp)
        state.update(prefixed("mha.smolgen.dense1", linear(s, "dense1_w", "dense1_b", hid, 64 * hc, sp)))
        state.update(prefixed("mha.smolgen.ln1", _layer_norm(s, "ln1", hid, sp)))
        state.update(prefixed("mha.smolgen.dense2", linear(s, "dense2_w", "dense2_b", c.heads * c.smolgen_gen, hid,
                                                           sp)))
        state.update(prefixed("mha.smolgen.ln2", _layer_norm(s, "ln2", c.heads * c.smolgen_gen, sp)))
    state.update(prefixed("ln1", _layer_norm(layer, "ln1", embed, path)))
    state.update(prefixed("ffn", _ffn(layer.ffn, embed, ffn, f"{path}.ffn")))
    state.update(prefixed("ln2", _layer_norm(layer, "ln2", embed, path)))
    return state


def _embedding(w, c: AttentionConfig) -> dict:
    E, state = c.embed, {}
    width = PLANES + (c.dense_features if c.embedding == "pe_dense" else 64)
    if c.embedding == "pe_dense":
        state.update(prefixed("preproc", linear(w, "ip_emb_preproc_w", "ip_emb_preproc_b", 64 * c.dense_features,
                                                64 * 12, "")))
        state.update(prefixed("ln", _layer_norm(w, "ip_emb_ln", E, "")))
    state.update(prefixed("proj", linear(w, "ip_emb_w", "ip_emb_b", E, width, "")))
    if c.gates:  # stored channel-major (E, 64)
        state["mult_gate"] = take(w, "ip_mult_gate", (E, 64), "").T.contiguous()
        state["add_gate"] = take(w, "ip_add_gate", (E, 64), "").T.contiguous()
    if c.embedding_ffn:
        state.update(prefixed("ffn", _ffn(w.ip_emb_ffn, E, c.embedding_ffn, "ip_emb_ffn")))
        state.update(prefixed("ffn_ln", _layer_norm(w, "ip_emb_ffn_ln", E, "")))
    return prefixed("embedding", state)


def _policy_head(h, p: str, c: AttentionConfig) -> dict:
    state = {} if c.shared_policy_embedding else prefixed(
        "embed", linear(h, "ip_pol_w", "ip_pol_b", c.policy_embed, c.embed, p))
    for j, layer in enumerate(h.pol_encoder):
        state.update(prefixed(f"encoders.{j}", _encoder(layer, c, c.policy_embed, c.policy_embed,
                                                        c.policy_encoder_ffn, f"{p}.pol_encoder.{j}", False)))
    state.update(prefixed("wq", linear(h, "ip2_pol_w", "ip2_pol_b", c.policy_dim, c.policy_embed, p)))
    state.update(prefixed("wk", linear(h, "ip3_pol_w", "ip3_pol_b", c.policy_dim, c.policy_embed, p)))
    state["promotion.weight"] = take(h, "ip4_pol_w", (4, c.policy_dim), p)
    return state


def _scalar_head(h, tag: str, p: str, c: AttentionConfig, channels: int, hidden: int, out: int) -> dict:
    return {**prefixed("embed", linear(h, f"ip_{tag}_w", f"ip_{tag}_b", channels, c.embed, p)),
            **prefixed("fc1", linear(h, f"ip1_{tag}_w", f"ip1_{tag}_b", hidden, 64 * channels, p)),
            **prefixed("fc2", linear(h, f"ip2_{tag}_w", f"ip2_{tag}_b", out, hidden, p))}


def attention_state(net: Lc0File, c: AttentionConfig) -> dict:
    w = net.weights
    state = _embedding(w, c)
    if c.smolgen_compress:
        state["smolgen_w.weight"] = take(w, "smolgen_w", (4096, c.smolgen_gen), "")
    for i, layer in enumerate(w.encoder):
        state.update(prefixed(f"encoders.{i}", _encoder(layer, c, c.embed, c.d_model, c.ffn, f"encoder.{i}",
                                                        bool(c.smolgen_compress))))
    if c.shared_policy_embedding:
        state.update(prefixed("policy_embedding", linear(w.policy_heads, "ip_pol_w", "ip_pol_b", c.policy_embed,
                                                         c.embed, "policy_heads")))
    for name, (h, p) in policy_heads(net).items():
        state.update(prefixed(f"policy_heads.{name}", _policy_head(h, p, c)))
    for name, (h, p) in value_heads(net).items():
        state.update(prefixed(f"value_heads.{name}", _scalar_head(h, "val", p, c, c.value_channels, c.value_hidden,
                                                                  3 if c.wdl else 1)))
    if c.moves_left_channels:
        state.update(prefixed("moves_left", _scalar_head(w, "mov", "", c, c.moves_left_channels,
                                                         c.moves_left_hidden, 1)))
    return state
