"""A shipped network and an ablation variant with the same tensors (cb-sv is the cb-targets ablation's
sv-positions, shipped) are one player: the site pools their matches against Stockfish 1350
(``webapp.networks.twins``), so one is never marked very weak while its twin is not (issue 37)."""

from __future__ import annotations

from pathlib import Path

from analysis.ablation.config import load_ablation
from analysis.checkpoint_file import read_header
from webapp.networks.figures import strength
from webapp.networks.twins import pool, pooled_metrics, tensor_digest

ROOT = Path(__file__).resolve().parent.parent
KEY = "match_value_vs_sf1350"


def twins() -> list[tuple[Path, Path]]:
    """(shipped file, variant export) for every variant whose tensors a shipped file repeats."""
    shipped = {tensor_digest(p): p for p in (ROOT / "weights").glob("*.safetensors")}
    found = []
    for config in sorted((ROOT / "configs" / "ablations").glob("*.toml")):
        cfg = load_ablation(config.relative_to(ROOT))
        for variant in cfg.variants:
            export = ROOT / cfg.store / f"{variant.name}.safetensors"
            if export.exists() and tensor_digest(export) in shipped:
                found.append((shipped[tensor_digest(export)], export))
    return found


def test_cb_sv_is_the_only_shipped_twin_of_a_variant_and_both_played_stockfish():
    found = twins()
    assert [(s.name, v.name) for s, v in found] == [("cb-sv.safetensors", "sv-positions.safetensors")]
    shipped, variant = (read_header(p)[0].metrics for p in found[0])
    assert shipped[KEY]["games"] == variant[KEY]["games"] == 100 and shipped[KEY] != variant[KEY]


def test_twins_are_judged_alike_from_their_pooled_games():
    for shipped_path, variant_path in twins():
        shipped, variant = (read_header(p)[0].metrics for p in (shipped_path, variant_path))
        apart = strength(shipped).very_weak, strength(variant).very_weak
        as_shipped, as_variant = strength(pooled_metrics(shipped, [variant])), strength(pooled_metrics(variant, [shipped]))
        assert as_shipped.very_weak == as_variant.very_weak and as_shipped.elo.text == as_variant.elo.text
        games = sum(m[KEY][k] for m in (shipped, variant) for k in ("wins", "draws", "losses"))
        assert pooled_metrics(shipped, [variant])[KEY]["games"] == games == 200
        print(f"{shipped_path.name} {apart[0]}, {variant_path.name} {apart[1]} apart; pooled {as_shipped.elo.text}")


def test_pooling_sums_the_games_and_counts_a_copied_record_once():
    a = {"a": "x", "b": "stockfish-1350", "wins": 1, "draws": 2, "losses": 97, "elo_diff": -638.2}
    b = {"a": "y", "b": "stockfish-1350", "wins": 0, "draws": 1, "losses": 99, "elo_diff": -800.0}
    pooled = pool([a, b])
    assert (pooled["games"], pooled["pooled_from"]) == (200, ["+1 =2 -97", "+0 =1 -99"])
    assert b["elo_diff"] < pooled["elo_diff"] < a["elo_diff"]
    assert pooled_metrics({KEY: a}, [{KEY: dict(a)}])[KEY] == a  # the same record in two files: one match
    assert pooled_metrics({KEY: a}, []) == {KEY: a} and pooled_metrics({"puzzles_value": {}}, [{KEY: b}])[KEY] == b
