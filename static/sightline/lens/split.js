// The attention split (issue 28): the explorer's layer taken apart for its head (or the mean of
// heads) and query square, three boards side by side: "content", softmax(QK^T / sqrt(D)) alone;
// "position", the logits the network's position term adds to it (Shaw's relative terms, a
// relative bias, smolgen); "final", the softmax of their sum, the network's own map. The explorer's
// query square, row/column mode and colour setting drive it. The maps come from
// /api/jobs/<id>/nodes/<n>/lens/split/?layer=L (a worker computes them: 202 while pending, polled);
// where the network has no split the panel says why, in the family's words. ?split=1 opens it.
import { base64Bytes } from "../lib/base64.js";
import { Board, squareName } from "../lib/board.js";
import { colourGradient } from "../lib/colour.js";
import { pollJson } from "../lib/poll.js";
import { getJsonResponse } from "../lib/requests.js";

export const PARTS = [
  ["content", "content: softmax(QK^T) alone"],
  ["position", "position term (logits added)"],
  ["final", "final: the network's map"],
];

// IEEE half precision (the API's "f16") to a float.
export function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

export function decodeHalf(b64) {
  const bytes = base64Bytes(b64), view = new DataView(bytes.buffer);
  const out = new Float32Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
  return out;
}

function make(tag, attrs = {}, parent = null) {
  const node = Object.assign(document.createElement(tag), attrs);
  if (parent) parent.appendChild(node);
  return node;
}

export class SplitView {
  constructor(explorer) {
    this.ex = explorer;
    this.on = false;
    this.about = null;
    this.data = null; // {node, layer, heads, content, position, final: Float32Array(heads * 4096)}
    this.cache = new Map();
    this.boards = null;
    this.build();
  }

  // The toggle joins the explorer's controls, the panel sits above its board.
  build() {
    const section = this.ex.section, controls = section.querySelector(".explorer-controls");
    const label = make("label", { title: "the layer's attention apart: content (QK^T), the position term, the final map" });
    this.toggle = make("input", { type: "checkbox", id: "att-split-toggle" }, label);
    label.append(" split: content · position · final");
    controls.insertBefore(label, document.getElementById("att-status"));
    this.toggle.addEventListener("change", () => this.setOn(this.toggle.checked));
    this.panel = make("div", { id: "att-split-panel", className: "att-split", hidden: true });
    section.insertBefore(this.panel, section.querySelector(".explorer-body"));
    this.why = make("p", { id: "att-split-why", className: "muted small" }, this.panel);
    this.why.setAttribute("role", "status");
    this.maps = make("div", { className: "att-split-maps" }, this.panel);
    this.caption = make("p", { id: "att-split-caption", className: "muted small" }, this.panel);
    this.hover = make("p", { id: "att-split-hover", className: "small" }, this.panel);
  }

  setOn(on) {
    this.on = on;
    this.toggle.checked = on;
    this.panel.hidden = !on;
    if (this.ex.open) this.ex.rememberView();
    if (on) this.load();
  }

  say(text) { this.why.textContent = text; }

  // The split of the explorer's node and layer: from the cache, or polled from the API.
  async load() {
    const node = this.ex.node, layer = this.ex.layer, key = `${node}:${layer}`;
    if (!this.on || node === undefined) return;
    const stale = () => !this.on || node !== this.ex.node || layer !== this.ex.layer;
    const base = `${this.ex.page.urls.nodes}${node}/lens/`;
    if (!this.about) this.about = await (await getJsonResponse(base)).json();
    const lacks = this.about.unavailable || {};
    const why = lacks.lens || lacks.split || this.about.error;
    this.maps.hidden = this.caption.hidden = !!why;
    if (why) { this.say(`No split for this network: ${why}.`); return; }
    if (this.cache.has(key)) { this.data = this.cache.get(key); this.say(""); this.draw(); return; }
    this.say("computing the split on a worker…");
    let body;
    try {
      body = await pollJson(`${base}split/?layer=${layer}`, {
        current: () => !stale(), // else the user moved on
        tooLong: "the split is taking too long; is a worker running?",
      });
    } catch (err) { this.say(err.message); return; }
    if (!body) return;
    const data = { node, layer, heads: body.heads };
    for (const [part] of PARTS) data[part] = decodeHalf(body[part]);
    this.cache.set(key, data);
    this.data = data;
    this.say("");
    this.draw();
  }

  buildBoards() {
    this.boards = PARTS.map(([part, title]) => {
      const fig = make("figure", { className: "att-split-part" }, this.maps);
      fig.dataset.part = part;
      const holder = make("div", {}, fig);
      const board = new Board(holder, { coordinates: false, onSquareClick: (sq) => this.ex.setQuery(sq) });
      board.setFlipped(this.ex.game.flipped);
      board.setPieceOpacity(0.45);
      board.svg.addEventListener("mousemove", (e) => this.hoverSquare(part, board._squareAt(e)));
      board.svg.addEventListener("mouseleave", () => this.hoverSquare(part, null));
      const legend = make("div", { className: "legend" }, fig);
      const low = make("span", {}, legend), bar = make("span", { className: "legend-bar" }, legend), high = make("span", {}, legend);
      bar.style.background = colourGradient();
      make("figcaption", { textContent: title }, fig);
      return { part, board, low, high, shown: null };
    });
  }

  setFlipped(flipped) { this.boards?.forEach(({ board }) => board.setFlipped(flipped)); }

  // Colours: "absolute" spans 0..1 for the two probability maps (the position logits keep their
  // own range: they have no fixed scale); "layer" spans every head of the layer, "map" the map itself.
  range(part, vals) {
    const scale = this.ex.scale, probs = part !== "position";
    if (scale === "absolute" && probs) return [0, 1];
    let low = Infinity, high = -Infinity;
    const lists = scale === "layer" ? [...Array(this.data.heads).keys()].map((h) => this.values(part, String(h))) : [vals];
    for (const list of lists) for (const v of list) { low = Math.min(low, v); high = Math.max(high, v); }
    return scale === "layer" && probs ? [0, high] : [low, high];
  }

  values(part, head) { return this.ex.valuesOf(this.data[part], this.data.heads, head); }

  draw() {
    const ex = this.ex;
    if (!this.on || !this.data || this.data.node !== ex.node || this.data.layer !== ex.layer || ex.query === null) return;
    if (!this.boards) this.buildBoards();
    const fen = ex.game.nodes[ex.node].fen, fmt = (v) => (Math.abs(v) < 0.1 ? v.toFixed(4) : v.toFixed(3));
    for (const view of this.boards) {
      const vals = this.values(view.part, ex.head), [low, high] = this.range(view.part, vals);
      view.board.setPosition(fen);
      view.board.setMarks({ [ex.query]: "query" });
      ex.paint(view.board, vals, [low, high]);
      view.shown = vals;
      view.low.textContent = fmt(low);
      view.high.textContent = fmt(high);
    }
    const q = squareName(ex.query), head = ex.head === "mean" ? "mean of heads" : `head ${Number(ex.head)}`;
    this.caption.textContent = (`Layer ${ex.layer}, ${head}: ${ex.mode === "row" ? `where ${q} attends` : `which squares attend to ${q}`}, ` +
      "taken apart: final = softmax(content logits + position). Click a square to make it the query.");
  }

  hoverSquare(part, sq) {
    const view = this.boards.find((b) => b.part === part);
    if (sq === null || !view.shown) { this.hover.textContent = ""; return; }
    this.hover.textContent = `${part} at ${squareName(sq)}: ${view.shown[sq].toFixed(4)}`;
  }
}
