"""Networks with the same weights are one player: their matches against Stockfish 1350 are pooled.

A shipped network may be a copy of an ablation variant (cb-sv is cb-targets' sv-positions with its
card's metadata), each with a 100-game match of its own; judged apart, two samples of one player can
fall on both sides of a rule such as "very weak" (more than 700 Elo below). So wherever the site reads a
network's strength it reads every match of those weights (``pooled_metrics``): the games summed, the Elo
and its interval fitted again (``analysis.eval.elo.elo_difference``, as ``match`` does).
"""

from __future__ import annotations

import hashlib
import json
import struct
from functools import lru_cache
from pathlib import Path

from analysis.eval.elo import elo_difference

MATCH_SUFFIX = "_vs_sf1350"


def tensor_digest(path: Path | None) -> str | None:
    """SHA-256 of a safetensors file's tensor bytes (the header, metadata included, left out); None
    for no file or one that cannot be read."""
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return _digest(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=256)
def _digest(path: str, size: int, mtime_ns: int) -> str | None:
    try:
        with open(path, "rb") as f:
            (header_len,) = struct.unpack("<Q", f.read(8))
            f.seek(8 + header_len)
            return hashlib.file_digest(f, "sha256").hexdigest()
    except (OSError, struct.error, ValueError):
        return None


def pool(entries: list[dict]) -> dict:
    """One match record of several against the same opponent: games summed, Elo fitted again."""
    if len(entries) == 1:
        return entries[0]
    wins, draws, losses = (sum(int(e.get(k, 0)) for e in entries) for k in ("wins", "draws", "losses"))
    sources = [f"+{e.get('wins', 0)} ={e.get('draws', 0)} -{e.get('losses', 0)}" for e in entries]
    return {"a": entries[0].get("a"), "b": entries[0].get("b"), **elo_difference(wins, draws, losses),
            "pooled_from": sources}


def pooled_metrics(metrics: dict, twins: list[dict]) -> dict:
    """``metrics`` with each match against Stockfish 1350 pooled with its twins' matches of the same
    agent (the same key); a twin's match of an agent this network never played is added as it is."""
    keys = {k for m in [metrics, *twins] for k, v in m.items() if k.endswith(MATCH_SUFFIX) and isinstance(v, dict)}
    if not twins or not keys:
        return metrics
    pooled = dict(metrics)
    for key in keys:
        entries = {json.dumps(m[key], sort_keys=True): m[key] for m in [metrics, *twins] if isinstance(m.get(key), dict)}
        pooled[key] = pool(list(entries.values()))  # a record copied into two files counts once
    return pooled
