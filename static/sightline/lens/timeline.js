// The decision timeline under the eval graph: for every main-line ply, from which readout point of
// the network (top: its input embedding, bottom: its own output) its final move stays its top move,
// and whether that is the move played. The worker reads it from the evaluation's own forward pass
// (analysis/lens/timeline.py) and it arrives with the plies; the strip fills in as they come. Plain
// SVG, on the eval graph's x axis (its margins and ply range), so a bar sits under its ply there.
import { moveLabel } from "../lib/format.js";

const SVG = "http://www.w3.org/2000/svg";
const MARGIN = { l: 40, r: 10, t: 4, b: 4 }; // the eval graph's left and right margins (graph.js)
const HEIGHT = 64;
const COLOURS = { same: "#1f77b4", other: "#f28c28", none: "#9a9a9a" };

function el(name, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  return node;
}

export class DecisionTimeline {
  constructor(game) {
    this.game = game;
    this.el = document.getElementById("decision-timeline");
    this.note = document.getElementById("decision-timeline-note");
    this.pending = false;
    this.bars = 0; // plies drawn
    window.addEventListener("resize", () => this.schedule());
  }

  schedule() {
    if (this.pending || !this.el) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.draw(); });
  }

  // [node id, its timeline] along the main line, for the evaluations that have one.
  rows() {
    return this.game.mainline.map((id) => [id, this.game.results.get(id)?.eval?.timeline])
      .filter(([, t]) => t && t.readouts);
  }

  // Why nothing is drawn: the worker's reason, else what the evaluations lack.
  why() {
    const evals = this.game.mainline.map((id) => this.game.results.get(id)?.eval).filter(Boolean);
    if (!evals.length) return "The decision timeline fills in as the evaluations arrive.";
    const reason = evals.map((e) => e.timeline?.why).find(Boolean);
    if (reason && evals.every((e) => !e.timeline?.readouts)) return `No decision timeline: ${reason}.`;
    if (evals.every((e) => !e.timeline)) return "No decision timeline: these evaluations were stored without one.";
    return null;
  }

  draw() {
    const rows = this.rows(), why = this.why();
    this.el.replaceChildren();
    this.bars = rows.length;
    if (!rows.length) { this.note.textContent = why || ""; return; }
    const game = this.game, ids = game.mainline, readouts = rows[0][1].readouts, last = readouts.length - 1;
    const first = game.nodes[ids[0]].ply, lastPly = game.nodes[ids[ids.length - 1]].ply;
    const width = this.el.clientWidth || 400, inner = width - MARGIN.l - MARGIN.r;
    const step = inner / (lastPly - first + 1), x = (ply) => MARGIN.l + (ply - first + 0.5) * step;
    const y = (r) => MARGIN.t + (r / Math.max(1, last)) * (HEIGHT - MARGIN.t - MARGIN.b);
    const svg = el("svg", { width, height: HEIGHT, role: "img", "aria-label": "decision timeline" });
    svg.append(el("rect", { x: MARGIN.l, y: MARGIN.t, width: inner, height: HEIGHT - MARGIN.t - MARGIN.b, fill: "#fafafa" }));
    svg.append(el("text", { x: MARGIN.l - 4, y: MARGIN.t + 8, "text-anchor": "end", "font-size": 9, fill: "#666" }, "in"));
    svg.append(el("text", { x: MARGIN.l - 4, y: HEIGHT - MARGIN.b, "text-anchor": "end", "font-size": 9, fill: "#666" }, "out"));
    for (const [id, t] of rows) {
      const node = game.nodes[id], kind = !t.played ? "none" : t.played_from === null ? "other" : "same";
      const top = y(t.final_from ?? last), bar = el("rect", {
        class: `timeline-bar ${kind}`, x: x(node.ply) - Math.max(1, step * 0.35), width: Math.max(2, step * 0.7),
        y: top, height: Math.max(2, y(last) - top + 2), fill: COLOURS[kind], "data-node": id });
      bar.append(el("title", {}, this.caption(id, t, readouts)));
      bar.addEventListener("click", () => game.go(id));
      svg.append(bar);
    }
    const cur = game.nodes[game.current];
    if (ids.includes(game.current)) {
      svg.append(el("line", { x1: x(cur.ply), x2: x(cur.ply), y1: MARGIN.t, y2: HEIGHT - MARGIN.b,
        stroke: "#444", "stroke-width": 1, "stroke-dasharray": "2,2" }));
    }
    this.el.append(svg);
    this.note.textContent = why || `Bars: from the readout point (of ${readouts.length}, ${readouts[0]} to ` +
      `${readouts[last]}) where the network's final move becomes its top move for good; blue: the move played, ` +
      "orange: another move was played.";
  }

  caption(id, t, readouts) {
    const node = this.game.nodes[id], policy = this.game.results.get(id)?.eval?.policy || [];
    // SAN from the policy, else from the game's own move out of this node (a move the policy list
    // leaves out, the played one most often); UCI only for a move neither knows.
    const played = (uci) => node.children.map((c) => this.game.nodes[c]).find((c) => c.uci === uci)?.san;
    const san = (uci) => policy.find((p) => p[0] === uci)?.[2] || played(uci) || uci;
    const where = (i) => `${readouts[i]} (point ${i} of 0 to ${readouts.length - 1})`;
    const label = node.parent === null ? "start" : moveLabel(node, true) + node.san;
    let text = `after ${label}: the network settles on ${san(t.final)} from ${where(t.final_from ?? readouts.length - 1)}`;
    if (t.played && t.played_from !== null) text += `; played ${san(t.played)}, the same move`;
    else if (t.played) text += `; played ${san(t.played)}: rank ${t.played_ranks[t.played_ranks.length - 1]} at the output`;
    return text;
  }
}
