"""A Giraffe training run: bootstrap, TD-Leaf iterations, move evaluator; resumable.

The run directory holds ``state.pt`` (weights, optimiser states, iteration, random states,
history; rewritten whole after every stage and iteration), ``history.json``, ``curve.png``
(STS and TD loss against iterations: the paper's Figure 4) and ``giraffe.safetensors``. The
checkpoint is marked trained only once the move evaluator is trained too: before that its
policy would be an untrained network's.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import torch
from tqdm import tqdm

from analysis.checkpoint import save_checkpoint
from analysis.eval.sts import load_sts, run_sts
from analysis.models.inference import make_evaluator
from analysis.models import get_family
from analysis.train.giraffe.bootstrap import bootstrap_data, material_error, run_bootstrap, stockfish_data
from analysis.train.giraffe.config import GiraffeRunConfig
from analysis.train.giraffe.move_training import (LabelledPositions, label_positions,
                                                            sample_search_positions, top1_accuracy,
                                                            train_move_evaluator)
from analysis.train.giraffe.positions import load_game_positions, sample_roots
from analysis.train.giraffe.tdleaf import make_search, self_play, tdleaf_step
from analysis.train.giraffe.value_evaluator import GiraffeValueEvaluator
from analysis.search import Budget

STAGES = ("bootstrap", "td", "move")
STATE = "state.pt"
EXPORT = "giraffe.safetensors"


class OutOfTime(Exception):
    """The run's ``max_wall_minutes`` is spent; the state is saved."""


def _adadelta(params, cfg: GiraffeRunConfig) -> torch.optim.Optimizer:
    return torch.optim.Adadelta(params, lr=cfg.lr, rho=cfg.rho, eps=cfg.eps)


class Run:
    def __init__(self, cfg: GiraffeRunConfig, log: Callable[[str], None] = print, progress: bool = True):
        self.cfg, self.log, self.progress = cfg, log, progress
        family = get_family("giraffe")
        torch.manual_seed(cfg.seed)
        self.model = family.build(family.preset(cfg.model)).eval()
        boot = cfg.bootstrap
        self.boot_opt = (torch.optim.Adam(self.model.evaluator.parameters(), lr=boot.lr) if boot.optimizer == "adam"
                         else _adadelta(self.model.evaluator.parameters(), cfg))
        self.td_opt = _adadelta(self.model.evaluator.parameters(), cfg)
        move = cfg.move
        self.move_opt = (torch.optim.Adam(self.model.move_evaluator.parameters(), lr=move.lr)
                         if move.optimizer == "adam" else _adadelta(self.model.move_evaluator.parameters(), cfg))
        self.rng = random.Random(cfg.seed)
        self.torch_rng = torch.Generator().manual_seed(cfg.seed)
        self.state = {"bootstrap_done": False, "td_iteration": 0, "move_done": False,
                      "history": {"bootstrap": [], "td": [], "move": []}}
        self.started = time.time()
        cfg.out.mkdir(parents=True, exist_ok=True)
        if (cfg.out / STATE).exists():
            self._resume()

    # -- state ---------------------------------------------------------------
    def _resume(self) -> None:
        saved = torch.load(self.cfg.out / STATE, weights_only=False)
        if saved["model_config"] != asdict(self.model.config):
            raise ValueError(f"{self.cfg.out / STATE} holds a different network ({saved['model_config']}); "
                             "use another run directory")
        self.model.load_state_dict(saved["model"])
        for name in ("boot_opt", "td_opt", "move_opt"):
            getattr(self, name).load_state_dict(saved[name])
        self.rng.setstate(saved["rng"])
        self.torch_rng.set_state(saved["torch_rng"])
        self.state = saved["state"]
        self.log(f"resumed {self.cfg.out}: bootstrap {'done' if self.state['bootstrap_done'] else 'not done'}, "
                 f"{self.state['td_iteration']} TD-Leaf iterations, move evaluator "
                 f"{'trained' if self.state['move_done'] else 'not trained'}")

    def save(self) -> None:
        payload = {"model": self.model.state_dict(), "model_config": asdict(self.model.config),
                   "boot_opt": self.boot_opt.state_dict(), "td_opt": self.td_opt.state_dict(),
                   "move_opt": self.move_opt.state_dict(), "rng": self.rng.getstate(),
                   "torch_rng": self.torch_rng.get_state(), "state": self.state}
        partial = self.cfg.out / (STATE + ".partial")
        torch.save(payload, partial)
        os.replace(partial, self.cfg.out / STATE)
        (self.cfg.out / "history.json").write_text(json.dumps(self.state["history"], indent=1))
        self._export()

    def _export(self) -> None:
        s = self.state
        trained = s["bootstrap_done"] and s["move_done"]
        provenance = {"source": "python -m analysis giraffe-train", "config": str(self.cfg.out),
                      "bootstrap": self._bootstrap_source() if s["bootstrap_done"] else "not done",
                      "td_leaf_iterations": s["td_iteration"],
                      "move_evaluator": "trained on deeper-search labels" if s["move_done"] else "untrained",
                      "settings": {name: asdict(getattr(self.cfg, name)) for name in ("bootstrap", "td", "move")},
                      "sts_curve": _sts_curve(s["history"])}
        if s["move_done"]:
            provenance["move_held_out_top1"] = s["history"]["move"]["held_out_top1_after"]
        save_checkpoint(self.cfg.out / EXPORT, self.model, trained=trained, provenance=provenance)

    def _bootstrap_source(self) -> str:
        c = self.cfg.bootstrap
        return "material-only" if c.source == "material" else f"Stockfish win probabilities ({c.data})"

    def _check_time(self) -> None:
        limit = self.cfg.max_wall_minutes
        if limit is not None and time.time() - self.started > 60 * limit:
            self.save()
            raise OutOfTime(f"max_wall_minutes ({limit}) reached")

    # -- stages ----------------------------------------------------------------
    def bootstrap(self, fens: list[str]) -> None:
        if self.state["bootstrap_done"]:
            return
        c = self.cfg.bootstrap
        if c.source == "stockfish":
            features, targets = stockfish_data(Path(c.data), c.positions, self.rng)
        else:
            features, targets = bootstrap_data(fens, c.positions, self.rng)
        before = material_error(self.model, features, targets)
        self.log(f"bootstrap: {len(targets)} positions, {c.source} MSE before {before:.4f}")
        rows = run_bootstrap(self.model, self.boot_opt, features, targets, c, self.torch_rng,
                             log=lambda r: self.log(f"bootstrap epoch {r['epoch']}: MSE {r['mse']:.4f}"))
        self.model.eval()
        self.state["history"]["bootstrap"] = [{"epoch": 0, "mse": before}] + rows
        self.state["bootstrap_done"] = True
        self.save()

    def _evaluator(self):
        """The move evaluator's policy splits the search once it is trained (section 6); before
        that the split is uniform (section 5.3)."""
        return make_evaluator(self.model, device="cpu") if self.state["move_done"] else GiraffeValueEvaluator(self.model)

    def td_iteration(self, fens: list[str]) -> dict:
        c = self.cfg.td
        started = time.time()
        roots = sample_roots(fens, c.positions, self.rng)
        bar = tqdm(total=len(roots), desc=f"TD-Leaf {self.state['td_iteration'] + 1}", unit="root",
                   disable=not self.progress, leave=False)
        trajectories, nodes = self_play(self._evaluator(), roots, c.moves, c.nodes, c.lambda_, bar.update,
                                        max_qdepth=c.max_qdepth)
        bar.close()
        seconds = time.time() - started
        row = {"iteration": self.state["td_iteration"] + 1, "roots": len(trajectories),
               "mean_abs_error": sum(abs(t.error) for t in trajectories) / max(1, len(trajectories)),
               "nodes": nodes, "nodes_per_s": round(nodes / max(seconds, 1e-9)), "seconds": round(seconds, 1)}
        row["td_loss"] = tdleaf_step(self.model, self.td_opt, trajectories) if trajectories else 0.0
        self.state["td_iteration"] += 1
        if c.sts_every and self.state["td_iteration"] % c.sts_every == 0:
            row["sts"] = self.sts()
        self.state["history"]["td"].append(row)
        self.log("TD-Leaf " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))
        return row

    def sts(self) -> dict:
        c = self.cfg.td
        positions = load_sts(Path(c.sts_epd))
        step = max(1, len(positions) // c.sts_positions)
        subset = positions[::step][:c.sts_positions]  # spread over the 15 themes
        search = make_search(self._evaluator(), c.max_qdepth)
        report = run_sts(subset, lambda board: search.run(board, Budget(nodes=c.sts_nodes)).best_move)
        return {"score": report.score, "maximum": report.maximum, "positions": len(subset), "nodes": c.sts_nodes}

    def td(self, fens: list[str]) -> None:
        if self.cfg.td.sts_every and "sts_after_bootstrap" not in self.state["history"]:
            self.state["history"]["sts_after_bootstrap"] = self.sts()  # iteration 0 of the curve
            self.log(f"STS after the bootstrap: {self.state['history']['sts_after_bootstrap']}")
            self.save()
        while self.state["td_iteration"] < self.cfg.td.iterations:
            self._check_time()
            self.td_iteration(fens)
            self.save()
            plot_history(self.state["history"], self.cfg.out / "curve.png")

    def move(self, fens: list[str]) -> None:
        if self.state["move_done"]:
            return
        c = self.cfg.move
        evaluator = GiraffeValueEvaluator(self.model)
        roots = sample_roots(fens, max(1, c.positions // 2), self.rng)
        qdepth = self.cfg.td.max_qdepth
        boards = sample_search_positions(evaluator, roots, c.sample_nodes, self.rng, qdepth)[:c.positions]
        bar = tqdm(total=len(boards), desc="labelling", unit="pos", disable=not self.progress, leave=False)
        data = label_positions(evaluator, boards, c.label_nodes, bar.update, qdepth)
        bar.close()
        held = max(1, len(data) // 10)  # a tenth held out to measure top-1 on unseen positions
        train = LabelledPositions(data.inputs[held:], data.best[held:])
        val = LabelledPositions(data.inputs[:held], data.best[:held])
        before = top1_accuracy(self.model, val)
        rows = train_move_evaluator(self.model, self.move_opt, train, c, self.torch_rng,
                                    log=lambda r: self.log(f"move evaluator epoch {r['epoch']}: BCE {r['bce']:.4f}, "
                                                           f"train top-1 {r['top1']:.3f}"))
        after = top1_accuracy(self.model, val)
        self.log(f"move evaluator: held-out top-1 {before:.3f} -> {after:.3f} on {len(val)} positions")
        self.state["history"]["move"] = {"epochs": rows, "positions": len(data), "held_out": len(val),
                                         "held_out_top1_before": before, "held_out_top1_after": after}
        self.state["move_done"] = True
        self.save()


def _sts_points(history: dict) -> list[tuple[int, dict]]:
    """(iteration, STS result) measured during the run; iteration 0 is after the bootstrap."""
    points = [(0, history["sts_after_bootstrap"])] if "sts_after_bootstrap" in history else []
    return points + [(r["iteration"], r["sts"]) for r in history.get("td", []) if "sts" in r]


def _sts_curve(history: dict) -> list[list[int]]:
    """[iteration, STS score] pairs, for the export's provenance."""
    return [[iteration, sts["score"]] for iteration, sts in _sts_points(history)]


def plot_history(history: dict, path: Path) -> Path:
    """STS against TD-Leaf iterations (Figure 4) beside the TD loss."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = history.get("td", [])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    axes[0].plot([r["iteration"] for r in rows], [r["td_loss"] for r in rows], "-")
    axes[0].set_xlabel("TD-Leaf iteration")
    axes[0].set_ylabel("L1 TD-Leaf loss")
    sts = _sts_points(history)
    axes[1].plot([i for i, _ in sts], [15000 * r["score"] / r["maximum"] for _, r in sts], "o-")
    axes[1].set_xlabel("TD-Leaf iteration")
    where = f"{sts[0][1]['positions']} positions at {sts[0][1]['nodes']:,} nodes" if sts else "no measurement"
    axes[1].set_ylabel(f"STS per 15,000 ({where})")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def train(cfg: GiraffeRunConfig, stages=STAGES, *, log: Callable[[str], None] = print, progress: bool = True) -> Run:
    """Run ``stages`` in order, resuming from ``cfg.out``; stops cleanly at ``max_wall_minutes``."""
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise ValueError(f"unknown stage(s) {', '.join(sorted(unknown))}; choose from {', '.join(STAGES)}")
    torch.set_num_threads(cfg.threads)
    run = Run(cfg, log=log, progress=progress)
    fens = load_game_positions(cfg.positions)
    try:
        for stage in STAGES:
            if stage in stages:
                run._check_time()
                getattr(run, stage)(fens)
    except OutOfTime as exc:
        log(f"stopped: {exc}; run it again to resume")
    return run
