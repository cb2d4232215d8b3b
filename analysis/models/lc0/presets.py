"""Named lc0 architectures: what an untrained stand-in, a test or a benchmark is built from.

Real lc0 networks bring their own config from the file; these only name shapes.
``maia`` is Maia's 6 x 64 SE-ResNet; ``bt4`` is the BT4 shape (the Chessformer
paper's CF-240M family) for sizing, not weights.
"""

from __future__ import annotations

from analysis.models.lc0.config import AttentionConfig, ResNetConfig

RESNET_PRESETS = {
    "se-2x16": ResNetConfig(blocks=2, channels=16, se_channels=4, value_channels=8, value_hidden=32),
    "maia": ResNetConfig(blocks=6, channels=64, se_channels=8, value_channels=32, value_hidden=128),
}

_SMOLGEN = dict(smolgen_activation="swish", gates=True, ffn_activation="mish", activation="mish",
                embedding="pe_dense", shared_policy_embedding=True, moves_left_channels=8, moves_left_hidden=128)
ATTENTION_PRESETS = {
    "bt-tiny": AttentionConfig(encoders=2, embed=32, heads=2, d_model=32, ffn=48, dense_features=8,
                               embedding_ffn=48, smolgen_compress=4, smolgen_hidden=16, smolgen_gen=8,
                               policy_embed=24, policy_dim=16, value_channels=8, **_SMOLGEN),
    "bt-small": AttentionConfig(encoders=6, embed=256, heads=8, d_model=256, ffn=512, dense_features=16,
                                embedding_ffn=512, smolgen_compress=16, smolgen_hidden=64, smolgen_gen=64,
                                policy_embed=256, policy_dim=256, value_channels=32, **_SMOLGEN),
    "bt4": AttentionConfig(encoders=15, embed=1024, heads=32, d_model=1024, ffn=1536, dense_features=32,
                           embedding_ffn=1536, smolgen_compress=32, smolgen_hidden=256, smolgen_gen=256,
                           policy_embed=1024, policy_dim=1024, value_channels=128, **_SMOLGEN),
}
