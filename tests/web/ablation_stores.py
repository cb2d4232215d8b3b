"""Fixture ablation stores for the site's tests: two ablation TOMLs (cf-position: three cf-tiny variants
that differ by ``position``; cb-targets: three cb-tiny ones by head and budget), each variant's
training config, and a store under ``WEIGHTS/ablations/<name>/`` laid out as ``analysis ablation run``
writes it (export with its results attached, card, history, one JSON per measure). Untrained random
weights stand in for training (a few steps would only cost time): the site reads files, it does not
judge the weights. The figures below are the fixture's; tests read them back from here."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from analysis.ablation.measure import metric_names
from analysis.checkpoint import save_checkpoint
from analysis.models import get_family

TRAIN = """data = "{root}/data"
out = "{root}/runs/{name}"
export = "{root}/runs/{name}/model.safetensors"
family = "{family}"
model = "{model}"
model_overrides = {overrides}
steps = 6
batch_size = 16
lr_steps = [[0, 1e-3]]
"""

# ablation -> (title, summary, [(variant, family, preset, overrides TOML, algo, budget)])
ABLATIONS = {
    "cf-position": ("Chessformer: absolute positions, relative bias or Shaw's encoding", "cf-tiny three times.", [
        ("shaw", "chessformer", "cf-tiny", '{ position = "shaw" }', "policy", ""),
        ("relative_bias", "chessformer", "cf-tiny", '{ position = "relative_bias" }', "policy", ""),
        ("absolute", "chessformer", "cf-tiny", '{ position = "absolute" }', "policy", "")]),
    "cb-targets": ("ChessBench: action value, state value or behavioural cloning", "cb-tiny three times.", [
        ("av-positions", "chessbench", "cb-tiny", '{ head = "action_value" }', "value", "positions: 6 x 16"),
        ("bc-positions", "chessbench", "cb-tiny", '{ head = "behavioural_cloning" }', "policy", "positions: 6 x 16"),
        ("av-compute", "chessbench", "cb-tiny", '{ head = "action_value" }', "value", "compute: 1 min")]),
}


def results(variant: str, algo: str, *, solved: int, sts: int) -> dict[str, dict]:
    """One variant's measure JSON, in the shapes the measuring commands print."""
    checks = [{"name": "start position", "passed": True, "detail": "0.50 for White"},
              {"name": "queen up", "passed": solved >= 100, "detail": "0.70 for White"}]
    agent = f"weights/ablations/x/{variant}.safetensors:{algo}"
    return {
        "puzzles": {"accuracy": solved / 1000, "solved": solved, "total": 1000, "agent": agent},
        "sts": {"score": sts, "maximum": 15000, "per_15000": sts, "positions": 1500, "agent": agent},
        "metrics": {"action_accuracy": 0.25 + solved / 10000, "kendall_tau": 0.125, "positions": 2908, "agent": agent},
        "value_quality": {"overall": {"mae": 0.2, "ece": 0.05, "side_to_move_bias": 0.01}, "positions": 2908,
                          "data": "datasets/abl-v1"},
        "value_sanity": {"passed": solved >= 100, "checks": checks},
        "heads": {"layers": 2, "heads": 2, "labels": [["movement", "unlabelled"], ["unlabelled", "unlabelled"]],
                  "lift": {}, "importance": {"kl": [[0.5, 0.1], [0.2, 0.3]]}},
    }


def write_configs(configs: Path, root: Path) -> None:
    """The two ablation TOMLs (their variants in the order above) and every variant's training config."""
    configs.mkdir(parents=True, exist_ok=True)
    for name, (title, summary, variants) in ABLATIONS.items():
        blocks = []
        for variant, family, preset, overrides, algo, budget in variants:
            train = configs / name / f"{variant}.toml"
            train.parent.mkdir(parents=True, exist_ok=True)
            train.write_text(TRAIN.format(root=root, name=f"{name}-{variant}", family=family, model=preset,
                                          overrides=overrides))
            blocks.append(f'[[variants]]\nname = "{variant}"\nconfig = "{train}"\nalgo = "{algo}"\n'
                          + (f'budget = "{budget}"\n' if budget else ""))
        (configs / f"{name}.toml").write_text(
            f'name = "{name}"\ntitle = "{title}"\ndata = "{root}/data"\nstore = "weights/ablations/{name}"\n'
            f'summary = "{summary}"\n[paper]\nsource = "a paper"\nscale = "a scale"\nfinding = "a finding."\n\n'
            + "\n".join(blocks))


def write_variant(weights: Path, ablation: str, variant: str, measured: dict[str, dict] | None, seed: int = 0) -> Path:
    """The variant's export (results attached), card, history and measure JSON; ``measured`` None: trained,
    not measured yet."""
    _, _, variants = ABLATIONS[ablation]
    _, family_name, preset, overrides, algo, _ = next(v for v in variants if v[0] == variant)
    family = get_family(family_name)
    torch.manual_seed(seed)
    model = family.build(family.preset(preset, **_overrides(overrides)))
    store = weights / "ablations" / ablation
    names = metric_names(_Variant(algo))
    path = save_checkpoint(store / f"{variant}.safetensors", model, trained=True,
                           provenance={"steps": 6, "batch_size": 16, "wall_seconds": 30, "source": "tests"},
                           metrics={names[m]: r for m, r in (measured or {}).items()})
    (store / f"{variant}.md").write_text(f"# {ablation} / {variant}\n\nOne variant of the fixture ablation.\n")
    (store / f"{variant}.history.json").write_text(json.dumps({"train": [{"step": 6, "total": 2.5}],
                                                               "val": [{"step": 6, "total": 2.75}]}))
    for measure, result in (measured or {}).items():
        (store / variant).mkdir(exist_ok=True)
        (store / variant / f"{measure}.json").write_text(json.dumps(result))
    return path


class _Variant:
    def __init__(self, algo: str):
        self.algo = algo


def _overrides(text: str) -> dict:
    import tomllib

    return tomllib.loads(f"x = {text}")["x"]
