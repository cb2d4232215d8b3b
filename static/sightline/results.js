// The analysis results the page holds, by node id: {eval, search, judgement}, merged from the
// page's JSON and the websocket messages (duplicates are harmless). Every value is White's: the
// server converts them (webapp/analyses/messages.py), and nothing here turns one round.
import { fmtPawns, mateInLine, scoreToCentipawns, whiteToMove } from "./format.js";

// The rules' result where the game is over on the board: White's expected score and WDL.
const RESULT_SCORE = { "1-0": 1, "0-1": 0, "1/2-1/2": 0.5 };
const RESULT_WDL = { "1-0": [1, 0, 0], "0-1": [0, 0, 1], "1/2-1/2": [0, 1, 0] };

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

  // The stored judgement of the move that led to a node (both values from its parent position,
  // see webapp/analyses/judgements.py): {glyph, name, drop, ...}; null until it marks the move.
  judgement(id) {
    const j = this.get(id)?.judgement;
    return j && j.glyph ? j : null;
  }

  // Nodes whose results the finished job should have but this page has not seen.
  incomplete(finished) {
    return this.nodes.some((n) => {
      const r = this.get(n.id);
      return !(r?.eval && ((r.search && (r.judgement || n.parent === null)) || !finished));
    });
  }
}
