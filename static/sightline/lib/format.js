// How the pages write numbers, durations, moves and comments. Every value it is given is White's
// (webapp/jobs/live/messages.py): nothing here turns a value round.

// The reference engine's colour wherever it is drawn: its line in the graph, its best-move arrow.
export const ENGINE_COLOUR = "#7c3aed";

export const fmtPct = (p) => (100 * p).toFixed(p < 0.1 ? 1 : 0) + "%";
export const fmtNum = (n) => (n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e4 ? (n / 1e3).toFixed(0) + "k" : String(n));
export const fmtPawns = (cp) => (cp > 0 ? "+" : cp < 0 ? "−" : "") +
  (Math.abs(cp) / 100).toFixed(Math.abs(cp) >= 1000 ? 0 : Math.abs(cp) >= 100 ? 1 : 2);
// A share to one decimal ("37.5%"); "" for a missing one.
export const fmtPct1 = (v) => (v == null ? "" : (100 * v).toFixed(1) + "%");

// A time span as people say it: "450 ms", "3.4 s", "12 min", "1.5 h" (the home form's estimate,
// the game page's time left).
export function fmtDuration(seconds) {
  if (seconds < 1) return `${Math.max(1, Math.round(seconds * 1000))} ms`;
  if (seconds < 90) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

// A finished search's effort in words: its nodes, how long it took (fmtDuration, not "1.6277s") and
// its depth; a rate only where one means something (a search of a few nodes in a blink has none).
export function searchEffort(s) {
  const seconds = s.elapsed_s ?? 0, rate = s.nps && s.nodes >= 100 && seconds >= 0.25;
  return `${fmtNum(s.nodes)} ${s.nodes === 1 ? "node" : "nodes"}${rate ? ` · ${fmtNum(s.nps)} nodes/s` : ""}` +
    ` · ${fmtDuration(seconds)}${s.depth ? ` · depth ${s.depth}` : ""}`;
}

// A centipawn-style figure from an expected score, with the project's own win-probability
// formula inverted (analysis.evaluator.score_to_centipawns; the slope comes with the page).
export function scoreToCentipawns(score, slope) {
  const s = Math.min(Math.max(score, 1e-9), 1 - 1e-9);
  return Math.max(-10000, Math.min(10000, Math.round(-Math.log(1 / s - 1) / slope)));
}

// A mate the search's line shows ("Qxf7#" as its best move) where the search gave no distance:
// in moves, positive when White mates (as messages.py gives ``mate``); null when the line shows none.
export function mateInLine(search, whiteMoves) {
  if (!search) return null;
  if (search.mate) return search.mate;
  const line = search.pv_san?.length ? search.pv_san : search.best_san ? [search.best_san] : [];
  const at = line.findIndex((san) => san.endsWith("#"));
  if (at < 0) return null;
  const moverMates = at % 2 === 0, whiteMates = moverMates === whiteMoves;
  return (whiteMates ? 1 : -1) * (Math.floor(at / 2) + 1);
}

// Whose turn it is names the side; it never converts a value (they all come as White's).
export const whiteToMove = (node) => node.fen.split(" ")[1] === "w";

// "12. " before White's move, "12... " before Black's when forced (a line's start, after a comment).
export function moveLabel(node, forceNumber) {
  const before = node.ply - 1, number = Math.floor(before / 2) + 1, white = before % 2 === 0;
  return white ? `${number}. ` : forceNumber ? `${number}... ` : "";
}

// The PGN's own move and position assessments (NAGs), as PGN readers show them.
const NAG_GLYPHS = { 1: "!", 2: "?", 3: "!!", 4: "??", 5: "!?", 6: "?!", 7: "□", 10: "=", 13: "∞", 14: "⩲", 15: "⩱",
  16: "±", 17: "∓", 18: "+−", 19: "−+", 22: "⨀", 23: "⨀", 32: "⟳", 33: "⟳", 36: "→", 37: "→", 40: "↑", 41: "↑",
  132: "⇆", 133: "⇆", 146: "N" };
export const nagText = (nags) => (nags || []).map((n) => NAG_GLYPHS[n] || `$${n}`).join("");

// Comments keep their [%eval ...] / [%clk ...] commands when stored and exported; the list shows the words.
export const commentText = (text) => (text || "").replace(/\[%[^\]]*\]/g, "").trim();
