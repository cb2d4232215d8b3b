"""Move marks per player along a game's main line, from the engine and from the network, read from
``manage.py analyze_pgn --json`` output (issue 29's closing note: each game's marks by the engine and
by two networks).

    .venv/bin/python manage.py analyze_pgn GAME.pgn --network NET --json > LINES.jsonl
    .venv/bin/python bench/marks_per_player.py LINES.jsonl [...]

Prints one JSON object per file: for White and Black, the engine's marks (judgements whose source is
"engine", lichess's rules) and the network's (``network_judgement``), as counts of "?!", "?" and "??".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

GLYPHS = ("?!", "?", "??")


def marks(lines: list[dict]) -> dict:
    main = sorted((line for line in lines if line["main"]), key=lambda line: line["ply"])
    out = {who: {colour: dict.fromkeys(GLYPHS, 0) for colour in ("white", "black")} for who in ("engine", "network")}
    for line in main[1:]:
        colour = "black" if " w " in line["fen"] else "white"  # the mover: not the side to move after the move
        engine, network = line.get("judgement") or {}, line.get("network_judgement") or {}
        if engine.get("source") == "engine" and engine.get("glyph"):
            out["engine"][colour][engine["glyph"]] += 1
        if network.get("glyph"):
            out["network"][colour][network["glyph"]] += 1
    return {"moves": len(main) - 1, **out}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for name in argv:
        lines = [json.loads(text) for text in Path(name).read_text().splitlines() if text.strip()]
        print(json.dumps({"file": name, **marks(lines)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
