// Attention explorer: fetches one layer of the shown position's attention
// (uint8 per query row + float32 row scales) and draws it under the pieces.
// Row mode: where the query square looks (A[q, :]); column mode: who looks
// at the chosen square (A[:, k]). Colours span each map's own range, a range shared
// by the layer's heads (to compare heads), or the absolute 0..1 of probabilities;
// the canvas shows the selected head's whole 64 x 64 matrix. With a head atlas, the head picker
// shows each head's label, and "show me" picks a query square that makes the selected head's
// pattern visible and outlines the pattern's squares (``?layer=&head=&showme=1`` does it on load).
// "split" (split.js) adds the layer taken apart: content, position term and final map side by side.
import { base64Bytes } from "../lib/base64.js";
import { Board, squareIndex, squareName } from "../lib/board.js";
import { colour, colourGradient } from "../lib/colour.js";
import { pollJson } from "../lib/poll.js";
import { SplitView } from "./split.js";

// A graph network (attention_support "moves") only has edges between squares a queen or a knight
// move apart: its maps are zero elsewhere by construction, so those squares are drawn grey.
export const NO_EDGE = "#9ca3af";
export function movesApart(a, b) {
  const df = Math.abs((a & 7) - (b & 7)), dr = Math.abs((a >> 3) - (b >> 3));
  return a !== b && (df === 0 || dr === 0 || df === dr || (df === 1 && dr === 2) || (df === 2 && dr === 1));
}

// "Show me": the query square where ``head`` puts the largest share of its attention on the label's
// pattern (``patterns[q]``: the pattern's squares from query q), from the head's own map of this
// position; null when the head attends to no pattern square from any query.
export function strongestQuery(maps, head, patterns) {
  let best = null;
  for (let q = 0; q < 64; q++) {
    const row = head * 4096 + q * 64;
    let share = 0;
    for (const k of patterns[q] || []) share += maps[row + k];
    if (share > 0 && (best === null || share > best.share)) best = { query: q, share };
  }
  return best;
}

// The API's layer (uint8 per value, a float32 scale per query row) as (heads, 64, 64) floats.
function attentionMaps(body) {
  const q = base64Bytes(body.maps), scales = new Float32Array(base64Bytes(body.scales).buffer);
  const maps = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) maps[i] = (q[i] / 255) * scales[i >> 6];
  return maps;
}

export class Explorer {
  constructor(page, game) {
    this.page = page;
    this.game = game;
    this.section = document.getElementById("explorer");
    this.layerSel = document.getElementById("att-layer");
    this.headSel = document.getElementById("att-head");
    this.statusEl = document.getElementById("att-status");
    this.open = false;
    this.layer = 0;
    this.head = "mean";
    this.mode = "row";
    this.scale = "map";
    this.query = null;
    this.data = null; // {node, layer, heads, maps: Float32Array(heads*4096)}
    this.cache = new Map();
    this.board = null;
    this.minis = [];
    this.labels = page.network.head_labels || null; // [layer][head] -> label, from the head atlas
    this.pattern = []; // squares "show me" outlines
    this.sparse = page.network.attention_support === "moves";
    if (!page.network.has_attention) return;
    this.split = new SplitView(this);
    this.showButton = document.getElementById("att-showme");
    this.showButton.addEventListener("click", () => this.showMe());
    this.layerSel.addEventListener("change", () => { this.layer = Number(this.layerSel.value); this.pattern = []; this.load(); });
    this.headSel.addEventListener("change", () => this.pickHead(this.headSel.value));
    document.getElementById("att-scale").addEventListener("change", (e) => { this.scale = e.target.value; this.draw(); });
    this.matrix = document.getElementById("att-matrix");
    // A click picks the query: the row's square ("attends from"), or the column's ("attends to").
    this.matrix.addEventListener("click", (e) => { const cell = this.matrixCell(this.matrix, e); if (cell) this.setQuery(this.mode === "row" ? cell.q : cell.k); });
    this.matrix.addEventListener("mousemove", (e) => this.hoverMatrix(this.matrix, this.head, e));
    document.getElementById("att-all-heads").addEventListener("change", (e) => { this.allHeads = e.target.checked; this.draw(); });
    document.querySelectorAll('input[name="att-mode"]').forEach((r) => r.addEventListener("change", () => { this.mode = r.value; this.draw(); }));
    document.getElementById("att-link").addEventListener("click", () => this.copyLink());
    this.openFromUrl(new URLSearchParams(location.search));
  }

  // ?layer=L&head=H[&query=e4][&mode=col][&showme=1] (a shared link, or an atlas cell): open on that
  // head and query square (layers and heads count from 0, as the API's), and show the pattern if asked.
  openFromUrl(params) {
    const layer = parseInt(params.get("layer"), 10), head = params.get("head");
    if (!Number.isInteger(layer) || !(head === "mean" || Number.isInteger(parseInt(head, 10)))) return;
    this.layer = layer;
    this.head = head === "mean" ? "mean" : String(parseInt(head, 10));
    const query = params.get("query");
    if (query && /^[a-h][1-8]$/.test(query)) { this.query = squareIndex(query); this._defaultQuery = false; }
    if (params.get("mode") === "col") { this.mode = "col"; document.querySelector('input[name="att-mode"][value="col"]').checked = true; }
    this.showOnLoad = params.get("showme") === "1";
    if (params.get("split") === "1") this.split.setOn(true);
    queueMicrotask(() => this.game.showTab("explorer"));
  }

  // This view's settings as URL parameters (the position is the URL's #node).
  viewParams() {
    const params = new URLSearchParams({ layer: this.layer, head: this.head });
    if (this.query !== null) params.set("query", squareName(this.query));
    if (this.mode === "col") params.set("mode", "col");
    if (this.split?.on) params.set("split", "1");
    return params;
  }

  // The address bar keeps the view: position, layer, head and query square, ready to share.
  rememberView() {
    const search = this.open ? `?${this.viewParams()}` : "";
    history.replaceState(null, "", `${location.pathname}${search}${location.hash}`);
    this.game.renderShare();
  }

  async copyLink() {
    const status = document.getElementById("att-link-status");
    try { await navigator.clipboard.writeText(location.href); status.textContent = "link copied"; }
    catch (err) { status.textContent = location.href; }
  }

  labelOf(layer, head) { return this.labels?.[layer]?.[head] ?? null; }

  pickHead(head) {
    this.head = String(head);
    this.headSel.value = this.head;
    this.pattern = [];
    const label = this.head === "mean" ? null : this.labelOf(this.layer, Number(this.head));
    this.showButton.hidden = !label || label === "unlabelled";
    this.showButton.textContent = label ? `Show me ${label}` : "Show me";
    this.draw();
  }

  // Ask the site for a query square showing the head's pattern in this position, and its squares.
  async showMe() {
    const node = this.game.nodes[this.node], params = new URLSearchParams({ layer: this.layer, head: this.head, fen: node.fen });
    const res = await fetch(`${this.page.urls.heads_show}?${params}`, { headers: { Accept: "application/json" } });
    const body = await res.json();
    if (!res.ok) { this.statusEl.textContent = body.error || `error ${res.status}`; return; }
    const own = this.data && this.data.node === this.node && this.head !== "mean" && body.patterns
      ? strongestQuery(this.data.maps, Number(this.head), body.patterns) : null;
    if (own) {
      body.query = own.query;
      body.squares = body.patterns[own.query];
      body.note = `query ${squareName(own.query)}: ${(100 * own.share).toFixed(0)}% of this head's attention on ` +
        `the ${body.squares.length} squares of ${body.label}, its most from any square`;
    }
    this.statusEl.textContent = body.note;
    this.pattern = body.squares;
    if (body.query !== null) { this._defaultQuery = false; this.query = body.query; }
    this.mode = "row";
    document.querySelector('input[name="att-mode"][value="row"]').checked = true;
    this.draw();
  }

  // Shown in the side column's tab beside the board (game.showTab); never scrolls the page.
  setOpen(open) {
    this.open = open;
    if (!open) { this.rememberView(); return; }
    if (!this.board) {
      this.board = new Board(document.getElementById("att-board"), { onSquareClick: (sq) => this.setQuery(sq) });
      this.board.setFlipped(this.game.flipped);
      this.board.svg.addEventListener("mousemove", (e) => this.hoverSquare(this.board._squareAt(e)));
      this.board.svg.addEventListener("mouseleave", () => this.hoverSquare(null));
    }
    this.onNodeChange(this.game.current);
  }

  // The attention value of the square under the pointer, for the shown head (or mean) and mode.
  hoverSquare(sq) {
    const el = document.getElementById("att-hover");
    if (sq === null || !this.shown) { el.textContent = "Point at a square for its attention value."; return; }
    const q = squareName(this.query), s = squareName(sq), v = this.shown[sq];
    el.textContent = `${s}: ${v.toFixed(4)} — ` + (this.mode === "row" ? `attention from ${q} to ${s}` : `attention from ${s} to ${q}`);
  }

  // {q, k} of the matrix cell under a mouse event, or null in the margins.
  matrixCell(canvas, e) {
    const box = canvas.getBoundingClientRect(), m = this.margin(canvas), cell = (canvas.width - m) / 64;
    const x = ((e.clientX - box.left) / box.width) * canvas.width - m, y = ((e.clientY - box.top) / box.height) * canvas.height - m;
    if (x < 0 || y < 0) return null;
    return { q: Math.min(63, Math.floor(y / cell)), k: Math.min(63, Math.floor(x / cell)) };
  }

  hoverMatrix(canvas, head, e) {
    const cell = this.matrixCell(canvas, e);
    if (!cell || !this.data) return;
    const v = this.matrixOf(head)[cell.q * 64 + cell.k];
    canvas.title = `query ${squareName(cell.q)} → key ${squareName(cell.k)}: ${v.toFixed(4)}; click to make ` +
      `${squareName(this.mode === "row" ? cell.q : cell.k)} the query`;
  }

  setFlipped(f) { this.board?.setFlipped(f); this.minis.forEach((m) => m.setFlipped(f)); this.split?.setFlipped(f); }

  onNodeChange(id) {
    if (!this.open) return;
    this.node = id;
    const node = this.game.nodes[id], next = this.game.nodes[node.children[0]];
    if (this.query === null || this._defaultQuery) {
      // Default query: the square the next (played) move starts from, else the mover's king.
      this.query = next ? squareIndex(next.uci.slice(0, 2)) : this.kingSquare(node);
      this._defaultQuery = true;
    }
    this.load();
  }

  kingSquare(node) {
    const king = node.fen.split(" ")[1] === "w" ? "K" : "k";
    const pieces = this.board ? this.board.pieces : [];
    const i = pieces.indexOf(king);
    return i >= 0 ? i : 4;
  }

  async load() {
    const id = this.node, layer = this.layer, key = `${id}:${layer}`;
    this.split.load();
    if (this.cache.has(key)) {
      this.data = this.cache.get(key);
      this.fillSelectors(this.data.layers, this.data.heads);
      this.pickHead(this.head);
      return;
    }
    this.statusEl.textContent = "computing attention…";
    let body;
    try {
      body = await pollJson(`${this.page.urls.nodes}${id}/attention/?layer=${layer}`, {
        current: () => id === this.node && layer === this.layer, // else the user moved on
        onBusy: (busy) => { this.statusEl.textContent = busy.error; }, // over the queueing limit: say so
        tooLong: "attention is taking too long; is a worker running?",
      });
    } catch (err) { this.statusEl.textContent = err.message; return; }
    if (!body) return;
    this.data = { node: id, layer, layers: body.layers, heads: body.heads, maps: attentionMaps(body) };
    this.cache.set(key, this.data);
    this.fillSelectors(body.layers, body.heads);
    this.statusEl.textContent = `${body.layers} layers × ${body.heads} heads`;
    this.pickHead(this.head);
    if (this.showOnLoad) { this.showOnLoad = false; await this.showMe(); }
  }

  fillSelectors(layers, heads) {
    if (this.layerSel.options.length !== layers) {
      this.layerSel.replaceChildren(...Array.from({ length: layers }, (_, i) => new Option(`${i}`, i)));
      this.layerSel.value = this.layer;
    }
    const name = (h) => { const label = this.labelOf(this.layer, h); return label ? `${h} · ${label}` : `${h}`; };
    if (this.headSel.options.length !== heads + 1 || this.headSel.dataset.layer !== String(this.layer)) {
      this.headSel.replaceChildren(new Option("mean of heads", "mean"), ...Array.from({ length: heads }, (_, i) => new Option(name(i), i)));
      this.headSel.dataset.layer = this.layer;
      this.headSel.value = this.head;
      if (this.minis.length !== heads) this.buildGrid(heads);
      this.minis.forEach((mini, h) => { mini.svg.parentElement.parentElement.querySelector("figcaption").textContent = `head ${name(h)}`; });
    }
  }

  buildGrid(heads) {
    const grid = document.getElementById("att-grid");
    grid.replaceChildren();
    this.minis = [];
    for (let h = 0; h < heads; h++) {
      const cell = document.createElement("figure");
      cell.className = "mini";
      cell.dataset.head = h;
      const holder = document.createElement("div");
      cell.appendChild(holder);
      const cap = document.createElement("figcaption");
      cap.textContent = `head ${h}`;
      cell.appendChild(cap);
      grid.appendChild(cell);
      const mini = new Board(holder, { coordinates: false, onSquareClick: () => this.pickHead(h) });
      mini.setFlipped(this.game.flipped);
      mini.setPieceOpacity(0.45);
      this.minis.push(mini);
    }
  }

  // 64 values for one head (or the mean) in the current mode and query.
  values(head) { return this.valuesOf(this.data.maps, this.data.heads, head); }

  // The same from any (heads, 64, 64) maps of the layer (the split's parts too).
  valuesOf(maps, heads, head) {
    const q = this.query, out = new Float32Array(64);
    const list = head === "mean" ? [...Array(heads).keys()] : [Number(head)];
    for (const h of list) {
      const base = h * 4096;
      for (let s = 0; s < 64; s++) out[s] += this.mode === "row" ? maps[base + q * 64 + s] : maps[base + s * 64 + q];
    }
    if (list.length > 1) for (let s = 0; s < 64; s++) out[s] /= list.length;
    return out;
  }

  // The [low, high] that colours span for a map of ``vals``; ``shared`` is the layer's range when
  // the heads share one (computed once per draw).
  range(vals, shared) {
    if (this.scale === "absolute") return [0, 1];
    if (shared) return shared;
    let high = -Infinity, low = Infinity;
    for (const v of vals) { high = Math.max(high, v); low = Math.min(low, v); }
    return [low, high];
  }

  // 0 .. the highest value of any head for the current query and mode.
  layerRange() {
    let high = 0;
    for (let h = 0; h < this.data.heads; h++) for (const v of this.values(String(h))) high = Math.max(high, v);
    return [0, high];
  }

  paint(board, vals, [low, high]) {
    const span = high - low;
    const edge = (sq) => !this.sparse || movesApart(sq, this.query);
    board.setHeat(Array.from(vals, (v, sq) => (edge(sq) ? (span > 0 ? (v - low) / span : 0.5) : NaN)),
      (t) => (Number.isNaN(t) ? NO_EDGE : colour(t)));
    return [low, high];
  }

  // One head's (or the mean's) 64 x 64 matrix: [query * 64 + key].
  matrixOf(head) {
    const { maps, heads } = this.data, list = head === "mean" ? [...Array(heads).keys()] : [Number(head)];
    const full = new Float32Array(4096);
    for (const h of list) for (let i = 0; i < 4096; i++) full[i] += maps[h * 4096 + i] / list.length;
    return full;
  }

  margin(canvas) { return canvas.width >= 300 ? 24 : 0; } // the large matrix has axes

  // The matrix on a canvas, one cell per (query, key) pair; the large one with rank ticks on
  // both axes (a1, a2, ... a8: each rank's eight squares follow its tick).
  drawMatrix() {
    const all = document.getElementById("att-matrices");
    this.matrix.hidden = !!this.allHeads;
    all.hidden = !this.allHeads;
    if (!this.allHeads) { this.paintMatrix(this.matrix, this.matrixOf(this.head)); return; }
    if (all.childElementCount !== this.data.heads) {
      all.replaceChildren();
      for (let h = 0; h < this.data.heads; h++) {
        const fig = document.createElement("figure"), canvas = document.createElement("canvas");
        canvas.width = canvas.height = 128;
        canvas.addEventListener("click", () => this.pickHead(h));
        canvas.addEventListener("mousemove", (e) => this.hoverMatrix(canvas, String(h), e));
        const cap = document.createElement("figcaption");
        cap.textContent = `head ${h}`;
        fig.append(canvas, cap);
        all.appendChild(fig);
      }
    }
    [...all.querySelectorAll("canvas")].forEach((canvas, h) => {
      this.paintMatrix(canvas, this.matrixOf(String(h)));
      canvas.parentElement.classList.toggle("selected", String(h) === String(this.head));
    });
  }

  paintMatrix(canvas, full) {
    const ctx = canvas.getContext("2d"), m = this.margin(canvas), cell = (canvas.width - m) / 64;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    let low = 0, high = 1;
    if (this.scale !== "absolute") { low = Infinity; high = -Infinity; for (const v of full) { low = Math.min(low, v); high = Math.max(high, v); } }
    if (this.scale === "layer") low = 0;
    const span = high - low;
    for (let q = 0; q < 64; q++) for (let k = 0; k < 64; k++) {
      ctx.fillStyle = this.sparse && !movesApart(q, k) ? NO_EDGE : colour(span > 0 ? (full[q * 64 + k] - low) / span : 0.5);
      ctx.fillRect(m + k * cell, m + q * cell, cell, cell);
    }
    if (m) {
      ctx.fillStyle = "#444";
      ctx.font = "10px system-ui, sans-serif";
      ctx.strokeStyle = "rgba(255,255,255,.6)";
      ctx.lineWidth = 1;
      for (let r = 0; r < 8; r++) {
        const at = m + r * 8 * cell;
        ctx.textAlign = "left"; ctx.fillText(`a${r + 1}`, at + 1, m - 6); // key squares (columns)
        ctx.textAlign = "right"; ctx.fillText(`a${r + 1}`, m - 3, at + 10); // query squares (rows)
        if (r) { ctx.beginPath(); ctx.moveTo(at, m); ctx.lineTo(at, canvas.height); ctx.moveTo(m, at); ctx.lineTo(canvas.width, at); ctx.stroke(); }
      }
    }
    ctx.strokeStyle = "#e11d48";
    ctx.lineWidth = 1.5;
    if (this.mode === "row") ctx.strokeRect(m, m + this.query * cell, canvas.width - m, cell);
    else ctx.strokeRect(m + this.query * cell, m, cell, canvas.height - m);
  }

  draw() {
    if (!this.data || !this.board || this.data.node !== this.node) return;
    const node = this.game.nodes[this.node], next = this.game.nodes[node.children[0]];
    this.board.setPosition(node.fen);
    this.board.setPieceOpacity(0.6);
    this.board.setMarks({ ...Object.fromEntries(this.pattern.map((sq) => [sq, "pattern"])), [this.query]: "query" });
    this.board.setArrows(next ? [{ from: squareIndex(next.uci.slice(0, 2)), to: squareIndex(next.uci.slice(2, 4)), width: 0.2, colour: "#e11d48", opacity: 0.85 }] : []);
    const shared = this.scale === "layer" ? this.layerRange() : null;
    const main = this.values(this.head);
    this.shown = main;
    const [min, max] = this.paint(this.board, main, this.range(main, shared));
    const fmt = (v) => (v < 0.1 ? v.toFixed(4) : v.toFixed(3));
    document.getElementById("legend-max").textContent = fmt(max);
    document.getElementById("legend-min").textContent = fmt(min);
    document.getElementById("legend").title = { map: "attention probability; colours span this map's range",
      layer: "attention probability; colours span 0 to the highest value of this layer's heads",
      absolute: "attention probability; colours span 0 to 1" }[this.scale];
    document.getElementById("legend-bar").style.background = colourGradient();
    const sq = squareName(this.query);
    const label = this.head === "mean" ? null : this.labelOf(this.layer, Number(this.head));
    const headText = this.head === "mean" ? "mean of heads" : `head ${Number(this.head)}${label ? ` (${label})` : ""}`;
    document.getElementById("att-caption").textContent =
      `Layer ${this.layer}, ${headText}: ${this.mode === "row" ? `where ${sq} attends` : `which squares attend to ${sq}`}. ` +
      (next ? `Played: ${next.san}. ` : "") + (this.pattern.length ? "Outlined: the pattern's squares. " : "") +
      (this.sparse ? `Grey squares have no edge to ${sq} in the network's move graph: zero by construction, not ignored. ` : "") +
      "Click a square to make it the query; click a mini board to pick its head.";
    this.drawMatrix();
    this.matrix.title = this.mode === "row" ? "click a row to make its square the query" : "click a column to make its square the query";
    this.rememberView();
    this.minis.forEach((mini, h) => {
      mini.setPosition(node.fen);
      mini.setMarks({ [this.query]: "query" });
      const vals = this.values(String(h));
      this.paint(mini, vals, this.range(vals, shared));
      mini.svg.parentElement.parentElement.classList.toggle("selected", String(h) === String(this.head));
    });
    this.split.draw();
  }

  // A clicked square becomes the query and stays so when the user steps through plies.
  setQuery(sq) { this._defaultQuery = false; this.query = sq; this.pattern = []; this.draw(); }
}
