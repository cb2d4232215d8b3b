"""Self-play games in parallel worker processes, each with its own copy of the network.

One game's search calls the network with a few positions at a time, so a GPU
mostly waits for the Python search around it; ``workers`` processes playing
games side by side keep it (and the CPU cores) busy. The paper batches 256
games into each network call instead; a multi-game search is a larger change
than this, and the processes give most of its throughput on a many-core host.

Workers are spawned (CUDA cannot be forked) once per run; every iteration
sends them the current weights, and each game its own search seed, so the
games are those the in-process loop would play with the same seeds.
"""

from __future__ import annotations

import io
import multiprocessing
from typing import Iterator, Sequence

import torch

from analysis.encoding import get_encoding
from analysis.models.inference import TorchEvaluator
from analysis.models import get_family
from analysis.search.gumbel import GumbelMuZero, GumbelSettings
from analysis.train.selfplay_config import SelfPlayConfig
from analysis.train.selfplay_games import Game, play_game

_worker: dict = {}  # this worker process's network, evaluator and the weights' version


def _start(family: str, config_dict: dict, encoding: str, device: str, threads: int | None) -> None:
    torch.set_num_threads(threads or 1)
    fam = get_family(family)
    model = fam.build(fam.config(config_dict))
    _worker.update(model=model, version=-1,
                   evaluator=TorchEvaluator(model, device=device, encoding=encoding))


def _play(task: tuple) -> Game:
    version, weights, seed, cfg = task
    if version != _worker["version"]:
        _worker["model"].load_state_dict(torch.load(io.BytesIO(weights), map_location="cpu"))
        _worker["evaluator"].model = _worker["model"].to(_worker["evaluator"].device).eval()
        _worker["version"] = version
    settings = GumbelSettings(max_considered_actions=cfg.max_considered_actions, simulations=cfg.simulations,
                              batch_size=cfg.search_batch, seed=seed)
    encoding = _worker["evaluator"].encoding
    return play_game(GumbelMuZero(_worker["evaluator"], settings), encoding, cfg.variant, cfg.simulations,
                     cfg.ply_limit)


class GamePool:
    """``cfg.workers`` spawned processes that play games with the weights they are given."""

    def __init__(self, cfg: SelfPlayConfig, model: torch.nn.Module, device: torch.device):
        family = get_family(model.family)
        encoding = get_encoding(family.encoding_of(model.config)).name
        self.cfg, self.version = cfg, 0
        self.pool = multiprocessing.get_context("spawn").Pool(
            cfg.workers, initializer=_start,
            initargs=(model.family, model.config.to_dict(), encoding, str(device), cfg.threads))

    def play(self, model: torch.nn.Module, seeds: Sequence[int]) -> Iterator[Game]:
        """The games of ``seeds`` with ``model``'s current weights, in order, as each finishes."""
        buffer = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, buffer)
        self.version += 1
        tasks = [(self.version, buffer.getvalue(), int(seed), self.cfg) for seed in seeds]
        return self.pool.imap(_play, tasks)

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()
