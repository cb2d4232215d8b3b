// The analysis results the page holds, by node id: {eval, search, engine, judgement,
// network_judgement}, merged from the
// page's JSON and the websocket messages (duplicates are harmless). Every value is White's: the
// server converts them (webapp/jobs/live/messages.py), and nothing here turns one round.
import { fmtNum, fmtPawns, mateInLine, scoreToCentipawns, whiteToMove } from "../lib/format.js";

// The rules' result where the game is over on the board: White's expected score and WDL.
const RESULT_SCORE = { "1-0": 1, "0-1": 0, "1/2-1/2": 0.5 };
const RESULT_WDL = { "1-0": [1, 0, 0], "0-1": [0, 0, 1], "1/2-1/2": [0, 1, 0] };

// An engine value's figure: "#3" / "#-2" (White mates / Black mates), the result where the game is
// over, else pawns from centipawns; null for no value. Every value is White's.
export function engineFigure(engine, outcome = null) {
  if (!engine) return null;
  if (outcome) return outcome.result === "1/2-1/2" ? "½-½" : outcome.result;
  if (engine.mate) return `#${engine.mate}`;
  return engine.cp == null ? null : fmtPawns(engine.cp);
}

// What the engine spent on a value: its nodes and depth, or, where the game is over, that the rules
// gave the result and nothing was searched (not "0 nodes").
export function engineEffort(engine, outcome = null) {
  if (outcome) return "the game is over: the rules' result, no search";
  return `${fmtNum(engine?.nodes || 0)} nodes${engine?.depth ? ` · depth ${engine.depth}` : ""}`;
}

export class Results extends Map {
  constructor(nodes, slope) {
    super();
    this.nodes = nodes;
    this.slope = slope;
    this.progress = new Map(); // node -> the running search's latest "progress" message
    this.firstPlyAt = undefined; // when the first evaluation or search arrived (the graph waits for it)
  }

  merge(id, parts) {
    if (this.firstPlyAt === undefined && (parts.eval || parts.search)) this.firstPlyAt = Date.now();
    const entry = this.get(id) || {};
    if (parts.eval) entry.eval = parts.eval;
    if (parts.search) { entry.search = parts.search; this.progress.delete(id); }
    if (parts.judgement) entry.judgement = parts.judgement;
    if (parts.network_judgement) entry.network_judgement = parts.network_judgement;
    if (parts.engine) entry.engine = parts.engine;
    this.set(id, entry);
  }

  // White's expected score at a node: the rules' where the game is over, else the search's when
  // it has one, else the network's; `source` ("eval" or "search") asks for that one alone.
  score(id, source = null) {
    const r = this.get(id);
    if (source === "eval") return r?.eval?.score ?? null;
    if (source === "search") return r?.search?.score ?? null;
    const over = this.nodes[id].outcome;
    if (over) return RESULT_SCORE[over.result];
    return r?.search?.score ?? r?.eval?.score ?? null;
  }

  // White wins / draw / White loses: the rules', else the search's, else the network's.
  wdl(id) {
    const over = this.nodes[id].outcome;
    if (over) return RESULT_WDL[over.result];
    const r = this.get(id);
    return r?.search?.wdl || r?.eval?.wdl || null;
  }

  // The evaluation as people read it: "#3" / "#-2" where a search proved a mate (or the game is
  // over: "1-0", "0-1", "½-½"), else pawns ("+0.35") from the expected score.
  evalText(id) {
    const over = this.nodes[id].outcome;
    if (over) return over.result === "1/2-1/2" ? "½-½" : over.result;
    const mate = mateInLine(this.get(id)?.search, whiteToMove(this.nodes[id]));
    if (mate) return `#${mate}`;
    const score = this.score(id);
    return score == null ? null : fmtPawns(scoreToCentipawns(score, this.slope));
  }

  // The reference engine's value of a node (Stockfish, webapp/jobs/run/engine_lane.py), White's:
  // {cp, mate, score, win, best, best_san, pv, pv_san, depth, nodes}; null until it comes.
  engine(id) { return this.get(id)?.engine ?? null; }

  // White's expected score by the engine (lichess's win % / 100); null without an engine value.
  engineScore(id) { return this.engine(id)?.score ?? null; }

  // The engine's figure as people read it: "#3" / "#-2", the result where the game is over,
  // else pawns from its centipawns ("+0.35"); null without an engine value.
  engineText(id) { return engineFigure(this.engine(id), this.nodes[id].outcome); }

  // The judgement of the move that led to a node, as the marks' view asks: "engine" (default) is
  // the mark to show (the engine's where it valued the move, else the network's: see ``source``);
  // "network" is always the network's own (webapp/jobs/live/messages.py). {glyph, name, drop, ...};
  // null until it marks the move.
  judgement(id, view = "engine") {
    const r = this.get(id), j = view === "network" ? r?.network_judgement : r?.judgement;
    return j && j.glyph ? j : null;
  }

  // The stored judgement whatever its verdict (a move judged good has no glyph), in the view asked.
  judgementData(id, view = "engine") {
    const r = this.get(id);
    return (view === "network" ? r?.network_judgement : r?.judgement) ?? null;
  }

  // Whether any node has the engine's value (the page then offers the engine's line and marks).
  hasEngine() { for (const r of this.values()) if (r.engine) return true; return false; }

  // Nodes whose results the finished job should have but this page has not seen.
  incomplete(finished) {
    return this.nodes.some((n) => {
      const r = this.get(n.id);
      return !(r?.eval && ((r.search && (r.judgement || n.parent === null)) || !finished));
    });
  }
}
