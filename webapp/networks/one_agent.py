"""Puzzles by one agent for every network, so that the figures side by side measure the same thing:
the raw policy's top move, or for a network with no policy head the move its value prefers one ply
ahead (``figures.PUZZLE_AGENTS``).

The shipped networks' figures are measured with ``python -m analysis puzzles ... --json`` and kept in
``weights/puzzles_one_agent.json`` beside the weights, each with the SHA-256 of the file it measured (a
changed file has no figure until measured again), instead of being written into the checkpoints: a
checkpoint's bytes are its identity, and every cached result is keyed by them. A network not in that file
(an upload, an ablation variant) is shown with the same agent's figure from its own metrics, if it has one.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from webapp.networks.figures import PUZZLE_AGENTS

log = logging.getLogger(__name__)

FILE_NAME = "puzzles_one_agent.json"


def puzzle_agent(has_policy: bool) -> str:
    return "policy" if has_policy else "value"


def with_one_agent(metrics: dict | None, checksum: str, weights_dir: Path | None = None) -> dict:
    """``metrics`` with the measured file's ``puzzles_<agent>`` result for the weights ``checksum``, if any."""
    found = measured(weights_dir).get(checksum)
    if found is None:
        return metrics or {}
    return {**(metrics or {}), f"puzzles_{found['agent']}": found["result"]}


def measured(weights_dir: Path | None = None) -> dict[str, dict]:
    """SHA-256 -> {"agent", "result"} from the weights folder's file; read again only when it changes."""
    path = Path(weights_dir or settings.SIGHTLINE_WEIGHTS_DIR) / FILE_NAME
    try:
        stat = path.stat()
    except OSError:
        return {}
    return _read(path, (stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=4)
def _read(path: Path, stamp: tuple) -> dict[str, dict]:
    try:
        networks = json.loads(path.read_text(encoding="utf-8"))["networks"]
        entries = networks.items()
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("%s cannot be read (%s): the networks are shown with their cards' figures only", path, exc)
        return {}
    found = {}
    for name, entry in entries:
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                and entry.get("agent") in PUZZLE_AGENTS and isinstance(entry.get("result"), dict)):
            log.warning("%s: the entry of %s lacks sha256, agent (%s) or result: left out", path, name,
                        " or ".join(PUZZLE_AGENTS))
            continue
        found[entry["sha256"]] = {"agent": entry["agent"], "result": entry["result"]}
    return found
