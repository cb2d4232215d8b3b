"""A job's game review from its stored results: lichess's per-player figures from the engine's values,
the network's marks counted beside them, and where the network and the engine disagree.

Everything here is White's point of view or names its player; it goes to the page and the API with
the job's snapshot (``webapp.jobs.live.messages``) and into the export's headers.
"""

from __future__ import annotations

from analysis.game_review import MARKS, PLURALS, Eval, Mark, review
from analysis.pov import score_for_white, white_to_move

# Formulas, for people reading the API: where the figures come from.
SOURCE = ("lichess's formulas (lila modules/analyse: WinPercent, Advice, AccuracyPercent, AccuracyCP) on the "
          "engine's values of the main line")


def engine_legend() -> tuple[str, str]:
    """(the line under the moves, its tooltip) for the engine's marks: lichess's rules on its values."""
    steps = ", ".join(f"{glyph} from {round(50 * limit)}" for limit, glyph, _ in reversed(MARKS))
    short = (f"Marks: the reference engine's, by lichess's rules: the mover's drop in win % from the position "
             f"before the move to the one after it ({steps} points).")
    return short, (f"{short} A move the engine itself named best is not marked; mates follow lichess's own rules "
                   f"(a mate walked into, a mate let slip). Figures: {SOURCE}.")


def main_line(nodes: list[dict]) -> list[dict]:
    """The main line's nodes in order, the first position included (a node's first child continues it)."""
    line = [nodes[0]]
    while line[-1]["children"]:
        line.append(nodes[line[-1]["children"][0]])
    return line


def engine_review(job, results: dict[int, dict]) -> dict | None:
    """Accuracy, average centipawn loss and mark counts per player from the engine, over the main line
    as far as the engine has valued it (``plies``; ``complete`` once it reached the end). None before
    the engine has valued two positions of it."""
    line = main_line(job.nodes)
    valued = []
    for node in line:
        value = results.get(node["id"], {}).get("engine")
        if value is None:
            break
        valued.append((node, value))
    if len(valued) < 2:
        return None
    evals = [Eval(value["cp"], value["mate"]) for _, value in valued]
    marks = [_mark(results.get(node["id"], {}).get("engine_judgement")) for node, _ in valued[1:]]
    figures = review(evals, marks, white_starts=white_to_move(line[0]["fen"]))
    return {**figures, "plies": len(valued) - 1, "complete": len(valued) == len(line),
            "engine": job.engine_name, "nodes": job.engine_nodes, "source": SOURCE}


def network_marks(job, results: dict[int, dict]) -> dict:
    """The network's own marks along the main line, counted per player (its opinion, not lichess's)."""
    white_starts = white_to_move(job.nodes[0]["fen"])
    out = {colour: {name: 0 for name in PLURALS.values()} for colour in ("white", "black")}
    for ply, node in enumerate(main_line(job.nodes)[1:]):
        judgement = results.get(node["id"], {}).get("judgement") or {}
        if judgement.get("name") in PLURALS:
            colour = "white" if (ply % 2 == 0) == white_starts else "black"
            out[colour][PLURALS[judgement["name"]]] += 1
    return out


def _mark(judgement: dict | None) -> Mark | None:
    if not judgement or not judgement.get("glyph"):
        return None
    return Mark(judgement["glyph"], judgement["name"])


def disagreements(job, results: dict[int, dict]) -> list[dict]:
    """Every position both valued, largest gap first: the network's expected score for White (its
    search's where it has one, else its evaluation's) against the engine's, and the network's likeliest
    move (policy) and its search's move against the engine's best."""
    out = []
    for node in job.nodes:
        parts = results.get(node["id"], {})
        engine, evaluation, search = parts.get("engine"), parts.get("eval"), parts.get("search") or {}
        if engine is None or evaluation is None or node.get("outcome"):
            continue
        white = white_to_move(node["fen"])
        network = search.get("score") if search.get("score") is not None else evaluation["score"]
        network_white, engine_white = score_for_white(network, white), score_for_white(engine["score"], white)
        policy = evaluation.get("policy") or []
        out.append({"node": node["id"], "ply": node["ply"], "san": node["san"], "main": node["main"],
                    "network_score": round(network_white, 4), "engine_score": round(engine_white, 4),
                    "gap": round(abs(network_white - engine_white), 4),
                    "policy_top": policy[0][0] if policy else None, "policy_top_san": policy[0][2] if policy else None,
                    "search_best": search.get("bestmove"), "engine_best": engine.get("best"),
                    "engine_best_san": engine.get("best_san"),
                    "same_move": bool(policy) and policy[0][0] == engine.get("best")})
    return sorted(out, key=lambda d: (-d["gap"], d["node"]))



# A network that adds b to the mover's expected score swings its line by 2b every ply; from this bias
# on, a steady game's line swings by lichess's smallest mark step (0.05 expected score) or more.
SWING_BIAS = 0.025


def network_swing(network) -> dict | None:
    """The network's side-to-move bias from its card's value-quality figures, flagged from ``SWING_BIAS``
    on (the graph says so and offers the engine's line or the network's line smoothed over two plies)."""
    quality = (network.metrics or {}).get("value_quality")
    overall = quality.get("overall") if isinstance(quality, dict) else None
    bias = overall.get("side_to_move_bias") if isinstance(overall, dict) else None
    if not isinstance(bias, (int, float)):
        return None
    swings = abs(bias) >= SWING_BIAS
    favoured = "the side to move" if bias > 0 else "the side that just moved"
    return {"bias": round(float(bias), 4), "threshold": SWING_BIAS, "swings": swings,
            "message": (f"{network.name}'s value favours {favoured} by {abs(bias):.3f} expected score (its card's "
                        f"value-quality figures), so its line swings every ply: read the engine's line, or the "
                        f"network's line smoothed over two plies.") if swings else ""}
