"""``python -m analysis ablation``: two tiny variants trained (one resumed from its run directory),
measured with the cards' commands, tabulated and pictured; the table rebuilt from the stored files alone;
and the shipped ablation files parse and differ only where their comparison says."""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
from dataclasses import asdict
from pathlib import Path

import chess
import pytest
import pyarrow as pa
import torch

from analysis.ablation.config import load_ablation
from analysis.ablation.measure import measure_jobs
from analysis.ablation.training import train_jobs
from analysis.cli import main
from analysis.data.store import ANNOTATED_SCHEMA, shard_path, write_table_atomic
from analysis.train.config import load_config
from analysis.train.loop import train
from tests.annotated_fixture import annotated_row
from tests.conftest import require_stockfish
from tests.conftest import ROOT

PUZZLES = """PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags,SortKey
p1,r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19,a2a7 e5e3 f2e3 f6a1 a7a1 a8a1,1493,76,94,18768,x,u,,1
p2,1r6/1PN5/3p4/4kpp1/1R6/P3n3/K1P5/8 b - - 0 49,e3d5 b4b5 b8b7 b5b7,1947,75,95,13691,x,u,,2
"""
STS = ('1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id "STS(v1.0) Undermine.001"; '
       'c0 "f5=10, Be5+=2, Bf2=3, Bg4=2"; c7 "f5 Be5+ Bf2 Bg4"; c8 "10 2 3 2"; c9 "f4f5 d4e5 d4f2 f3g4";\n')

TRAIN = """data = "{data}"
out = "{out}"
export = "{out}/model.safetensors"
family = "{family}"
model = "{model}"
model_overrides = {overrides}
steps = 6
batch_size = 16
lr_steps = [[0, 1e-3]]
val_every = 3
val_batches = 1
checkpoint_every = 3
log_every = 1
num_workers = 0
threads = 1
"""


def _dataset(root: Path, multipv: bool = True) -> Path:
    rng, rows = random.Random(0), []
    for game in range(4):
        board = chess.Board()
        for ply in range(12):
            rows.append(annotated_row(board, game, ply, "test" if game == 0 else "train", multipv or ply % 2 == 0))
            board.push(rng.choice(list(board.legal_moves)))
    write_table_atomic(pa.Table.from_pylist(rows, schema=ANNOTATED_SCHEMA), shard_path(root, 0))
    return root


def _ablation(tmp: Path, data: Path, **extra) -> Path:
    (tmp / "puzzles.csv").write_text(PUZZLES)
    (tmp / "sts.epd").write_text(STS)
    (tmp / "openings").mkdir(exist_ok=True)
    (tmp / "openings" / "c.tsv").write_text("eco\tname\tpgn\nC20\tKing's Pawn Game\t1. e4 e5\n")
    variants = {"cf-absolute": ("chessformer", "cf-tiny", '{ position = "absolute" }', "policy"),
                "cb-bc": ("chessbench", "cb-tiny", '{ head = "behavioural_cloning", vocab = 31 }', "policy")}
    blocks = []
    for name, (family, model, overrides, algo) in variants.items():
        path = tmp / f"{name}.toml"
        path.write_text(TRAIN.format(data=data, out=tmp / "runs" / name, family=family, model=model, overrides=overrides))
        blocks.append(f'[[variants]]\nname = "{name}"\nconfig = "{path}"\nalgo = "{algo}"\n')
    settings = "".join(f"{k} = {json.dumps(v)}\n" for k, v in extra.items())
    path = tmp / "tiny.toml"
    path.write_text(f'name = "tiny"\ntitle = "Tiny: two families"\ndata = "{data}"\nstore = "{tmp / "store"}"\n'
                    f'doc = "{tmp / "docs" / "ablations.md"}"\npuzzles = "{tmp / "puzzles.csv"}"\n'
                    f'sts = "{tmp / "sts.epd"}"\nopenings = "{tmp / "openings"}"\nheads_positions = 3\nlimit = 2\nsame_positions = true\n{settings}'
                    f'[paper]\nsource = "a paper"\nscale = "a scale"\nfinding = "a finding."\n\n' + "\n".join(blocks))
    return path


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_runs_resumes_measures_and_tabulates(tmp_path):
    require_stockfish()  # the match's opponent
    path = _ablation(tmp_path, _dataset(tmp_path / "data"))
    cfg = load_ablation(path)
    # An interrupted run: three of the six steps, its state in runs/cf-absolute; mark its history.
    first = load_config(cfg.variants[0].config, steps=3, export=str(tmp_path / "partial.safetensors"))
    train(first, progress=False)
    state = torch.load(first.out / "state.pt", weights_only=False)
    state["history"]["train"][0]["interrupted_run"] = True
    torch.save(state, first.out / "state.pt")

    code, out, err = _cli("ablation", "run", str(path))
    assert code == 0, err
    history = json.loads((cfg.store / "cf-absolute.history.json").read_text())
    assert history["train"][0].get("interrupted_run") and [r["step"] for r in history["train"]] == [1, 2, 3, 4, 5, 6]
    for v in cfg.variants:
        assert (cfg.store / f"{v.name}.safetensors").exists() and (cfg.store / f"{v.name}.md").exists()
    assert not (cfg.store / "cb-bc" / "value_quality.json").exists()  # a cloning net has no value
    for measure in ("puzzles", "sts", "metrics", "value_quality", "value_sanity", "heads", "match"):
        assert (cfg.store / "cf-absolute" / f"{measure}.json").exists(), measure
    match = json.loads((cfg.store / "cb-bc" / "match.json").read_text())
    assert match["games"] == 2 and match["b"] == "stockfish-1350"
    report = _cli("report", "--model", str(cfg.store / "cf-absolute.safetensors"))[1]
    assert "/2)" in report  # the attached puzzles result: 2 puzzles

    doc = cfg.doc.read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    assert len(rows) == 2 and "no value head" in rows[1] and "not measured" not in doc
    puzzles = json.loads((cfg.store / "cb-bc" / "puzzles.json").read_text())
    assert f"({puzzles['solved']}/2)" in rows[1]
    assert f"+{match['wins']} ={match['draws']} -{match['losses']}" in rows[1] and "| L0: " in rows[1]
    assert (cfg.doc.parent / "img" / "ablation-tiny.png").stat().st_size > 0
    assert "Training positions: 36, 36 with action values" in doc

    # A rerun has nothing left to train or measure; the table comes back from the stored files alone.
    assert train_jobs(cfg) == [] and all(measure_jobs(cfg, v) == [] for v in cfg.variants)
    shutil.rmtree(tmp_path / "runs")
    cfg.doc.write_text("# Ablations\n\nintro\n")
    code, out, _ = _cli("ablation", "table", str(path))
    assert code == 0 and cfg.doc.read_text() == "# Ablations\n\nintro\n\n" + doc.split("\n\n", 1)[1]


def test_train_only_keeps_the_exports_and_a_lease_caps_only_longer_runs(tmp_path):
    """A GPU machine trains (--train-only, all at once) and the measuring happens elsewhere with --no-train;
    --max-wall-minutes shortens a run whose own limit is longer and leaves a shorter one alone."""
    path = _ablation(tmp_path, _dataset(tmp_path / "data"))
    cfg = load_ablation(path)
    short = cfg.variants[1].config
    short.write_text(short.read_text() + "max_wall_minutes = 0.5\n")
    cfg = load_ablation(path)
    argv = {job.label.split("/")[1]: job.argv for job in train_jobs(cfg, cap_minutes=2)}
    assert argv["cf-absolute"][-2:] == ("--max-wall-minutes", "2") and "--max-wall-minutes" not in argv["cb-bc"]

    code, out, err = _cli("ablation", "run", "--train-only", "--parallel", "2", str(path))
    assert code == 0 and "every variant trained; exports in" in out, err
    assert all((cfg.store / f"{v.name}.safetensors").exists() for v in cfg.variants)
    assert not (cfg.store / "cf-absolute").exists() and not cfg.doc.exists()  # nothing measured or written
    code, _, err = _cli("ablation", "run", "--no-train", "--train-only", str(path))
    assert code == 2 and "leave nothing to do" in err
    code, _, err = _cli("ablation", "run", "--parallel", "0", str(path))
    assert code == 2 and "must be at least 1" in err
    code, _, err = _cli("ablation", "run", "--max-wall-minutes", "-1", str(path))
    assert code == 2 and "must be positive" in err
    code, out, _ = _cli("ablation", "run", "--no-train", str(path))
    assert code == 0 and (cfg.store / "cf-absolute" / "puzzles.json").exists() and cfg.doc.exists()


def test_positions_without_action_values_stop_the_run_before_training(tmp_path):
    path = _ablation(tmp_path, _dataset(tmp_path / "data", multipv=False))
    code, _, err = _cli("ablation", "run", str(path))
    assert code == 2 and "have no action values" in err
    assert not (tmp_path / "runs").exists()


def test_bad_ablation_files_are_refused(tmp_path):
    code, _, err = _cli("ablation", "run", str(_ablation(tmp_path, tmp_path / "nowhere")))
    assert code == 2 and "nowhere not found: build it first" in err
    data = _dataset(tmp_path / "data")
    code, _, err = _cli("ablation", "table", str(_ablation(tmp_path, data, colour="blue")))
    assert code == 2 and "unknown setting(s): colour" in err
    code, _, err = _cli("ablation", "run", str(_ablation(tmp_path, data, measures=["puzzles", "elo"])))
    assert code == 2 and "unknown measure(s) elo" in err


SHIPPED = sorted((ROOT / "configs" / "ablations").glob("*.toml"))
PER_RUN = {"out", "export"}


def _settings(variant) -> dict:
    return {k: v for k, v in asdict(variant.train).items() if k not in PER_RUN}


def test_shipped_ablations_parse_and_share_one_dataset():
    assert {p.stem for p in SHIPPED} == {"cf-position", "cb-targets"}
    datasets = set()
    for path in SHIPPED:
        cfg = load_ablation(path.relative_to(ROOT))
        datasets |= {tuple(v.train.datasets) for v in cfg.variants}
        assert cfg.data == cfg.variants[0].train.data and cfg.limit is None and cfg.heads_positions == 256
        assert all(v.train.threads == 1 and v.train.num_workers == 0 for v in cfg.variants)
    assert len(datasets) == 1


GPU = ROOT / "configs" / "ablations" / "gpu"


def test_gpu_ablations_are_the_same_comparisons_at_the_papers_smallest_presets():
    """Ready for a lent GPU: the paper's smallest presets on the CPU ablations' dataset, stores apart."""
    for small, big, preset in [("cf-position", "cf-position-6m", "cf-6m"), ("cb-targets", "cb-targets-9m", "cb-9m")]:
        cpu, gpu = load_ablation(ROOT / "configs" / "ablations" / f"{small}.toml"), load_ablation(GPU / f"{big}.toml")
        assert [v.name for v in gpu.variants] == [v.name for v in cpu.variants] and gpu.data == cpu.data
        assert gpu.store.name == big and all(v.train.model == preset for v in gpu.variants)
        assert [v.train.model_overrides for v in gpu.variants] == [v.train.model_overrides for v in cpu.variants]
        assert len({v.train.out for v in [*gpu.variants, *cpu.variants]}) == 2 * len(cpu.variants)


@pytest.mark.parametrize("path", [ROOT / "configs" / "ablations" / "cf-position.toml", GPU / "cf-position-6m.toml"],
                         ids=["cpu", "gpu"])
def test_position_variants_differ_only_in_position(path):
    cfg = load_ablation(path)
    settings = [_settings(v) for v in cfg.variants]
    positions = [s.pop("model_overrides") for s in settings]
    assert positions == [{"position": p} for p in ("shaw", "relative_bias", "absolute")]
    assert all(s == settings[0] for s in settings) and settings[0]["schedule"] == "steps"


@pytest.mark.parametrize("path", [ROOT / "configs" / "ablations" / "cb-targets.toml", GPU / "cb-targets-9m.toml"],
                         ids=["cpu", "gpu"])
def test_target_variants_differ_only_in_head_and_budget(path):
    cfg = load_ablation(path)
    assert cfg.same_positions
    budgets: dict[str, list[dict]] = {}
    for v in cfg.variants:
        budgets.setdefault(v.budget, []).append(_settings(v))
    assert len(budgets) == 2
    for group in budgets.values():
        heads = [s.pop("model_overrides") for s in group]
        assert [h["head"] for h in heads] == ["action_value", "state_value", "behavioural_cloning"]
        assert all(s == group[0] for s in group)
    compute, samples = sorted(budgets.values(), key=lambda group: group[0]["schedule"] != "progress")
    assert compute[0]["schedule"] == "progress" and compute[0]["steps"] > 10 * samples[0]["steps"]
    budget_keys = {"steps", "max_wall_minutes", "schedule", "lr_steps", "swa_start", "warmup_steps"}
    assert {k: v for k, v in compute[0].items() if k not in budget_keys} == \
           {k: v for k, v in samples[0].items() if k not in budget_keys}


def test_the_training_cell_names_both_stages_of_a_continued_run():
    """A variant cut short by a lease and continued from its export shows both stages and their hardware."""
    from analysis.ablation.summary import Summary, training_cell

    cfg = load_ablation(ROOT / "configs" / "ablations" / "cb-targets.toml")
    one = {"steps": 4340, "batch_size": 256, "wall_seconds": 330.6, "hardware": "1 x NVIDIA H100 80GB HBM3",
           "stopped_by_time_limit": True}
    assert training_cell(Summary(cfg.variants[0], one, {}, {})) == \
        "4,340 steps x 256, 5.5 min on 1 x NVIDIA H100 80GB HBM3 (time limit)"
    two = {"steps": 7660, "batch_size": 256, "wall_seconds": 3000, "hardware": "CPU (x86_64, 2 threads)",
           "init_from": {"steps": 4340, "hardware": "1 x NVIDIA H100 80GB HBM3"}}
    assert training_cell(Summary(cfg.variants[0], two, {}, {})) == \
        "4,340 steps on 1 x NVIDIA H100 80GB HBM3, then 7,660 steps x 256, 50.0 min on CPU (x86_64, 2 threads)"


def test_the_atlas_cells_count_layers_and_heads_from_0():
    """The table's atlas columns use the site's one numbering: L0 is the first layer, and the most
    important head is named by the indices under which the stored atlas holds it."""
    import re

    from analysis.ablation.summary import Summary, atlas_cells

    cfg = load_ablation(ROOT / "configs" / "ablations" / "cf-position.toml")
    shaw = next(v for v in cfg.variants if v.name == "shaw")
    heads = json.loads((cfg.store / "shaw" / "heads.json").read_text())
    per_layer, most = atlas_cells(Summary(shaw, {}, {}, {"heads": heads}))
    assert [cell.split(":")[0] for cell in per_layer.split("; ")] == [f"L{i}" for i in range(heads["layers"])]
    layer, head, label = re.match(r"L(\d+) H(\d+) (\S+),", most).groups()
    kl = heads["importance"]["kl"]
    assert kl[int(layer)][int(head)] == max(max(row) for row in kl) and heads["labels"][int(layer)][int(head)] == label
