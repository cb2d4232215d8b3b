// The Lens view (issue 28): take the network apart on the shown position. Logit-lens curves of the
// top moves with the network's top move per readout point, the causal head grid of a move as a
// heatmap (a click opens that head's map in the attention explorer), and one head scaled by a
// slider with the policy redrawn clean vs scaled. Every quantity comes from the API
// (/api/jobs/<id>/nodes/<n>/lens/...), which a worker computes: 202 while pending, polled here.
// Where the network lacks something, the panel says why in the adapter's words.
// The view lives in the address: ?lens=1&lhead=L:H&scale=S&gmove=UCI (the position is #node).
// The neuron panel is neurons.js; the lens gives it the node and the network's capabilities.
// Layers, heads and units count from 0 everywhere (labels, addresses, the API), as readout points do.
// Each position asks the API its legal moves (UCI and SAN): the chosen move is reset to the played
// (or top) move when the position changes, a typed move is checked here, and no illegal one is sent.

import { escapeHtml } from "../lib/html.js";
import { pollJson } from "../lib/poll.js";
import { getJsonResponse } from "../lib/requests.js";
import { Neurons } from "./neurons.js";

const COLOURS = ["#2f6fb0", "#d0603a", "#3d9a62", "#8a55b5"];
const BARS = 10;
const DEADLINE_MS = 600_000; // a lens answer on a busy worker may take minutes
const $ = (id) => document.getElementById(id);

// Red when removing the head lowers the move's logit, blue when it raises it.
export function diverging(v, span) {
  const t = Math.max(-1, Math.min(1, v / (span || 1)));
  const [r, g, b] = t < 0 ? [255, Math.round(255 * (1 + t)), Math.round(255 * (1 + t))] : [Math.round(255 * (1 - t)), Math.round(255 * (1 - t)), 255];
  return `rgb(${r},${g},${b})`;
}

export class Lens {
  constructor(page, game) {
    this.page = page;
    this.game = game;
    this.open = false;
    this.about = null;
    this.layer = 0; this.head = 0; this.scale = 0; this.gridMove = null;
    this.headChosen = false; // until the user (or a shared link) picks a head, the grid's strongest is shown
    this.urlMove = null; // a shared link's move, for its own position only
    this.san = new Map(); // uci -> SAN of the shown position's legal moves
    this.serial = 0; // each (re)draw's number: an older poll's answer is dropped
    this.statusEl = $("lens-status");
    this.neurons = new Neurons(page, game, $("neurons"));
    this.wire();
    this.openFromUrl(new URLSearchParams(location.search));
  }

  wire() {
    $("lens-layer").addEventListener("change", (e) => { this.layer = Number(e.target.value); this.headChosen = true; this.fillHeads(); this.loadAblation(); });
    $("lens-head").addEventListener("change", (e) => { this.head = Number(e.target.value); this.headChosen = true; this.loadAblation(); });
    const slider = $("lens-scale");
    slider.addEventListener("input", () => { $("lens-scale-value").textContent = Number(slider.value).toFixed(2); });
    slider.addEventListener("change", () => { this.scale = Number(slider.value); this.loadAblation(); });
    $("lens-grid-move").addEventListener("change", (e) => this.chooseMove(e.target.value));
    $("lens-move-form").addEventListener("submit", (e) => { e.preventDefault(); this.typeMove($("lens-move-input").value); });
    $("lens-link").addEventListener("click", () => this.copyLink());
  }

  // ?lens=1[&lhead=L:H][&scale=S][&gmove=UCI]: a shared link opens the lens on that view.
  openFromUrl(params) {
    if (params.get("lens") !== "1") return;
    const [layer, head] = (params.get("lhead") || "0:0").split(":").map((x) => parseInt(x, 10));
    if (Number.isInteger(layer) && Number.isInteger(head)) { this.layer = layer; this.head = head; }
    this.headChosen = params.has("lhead");
    const scale = parseFloat(params.get("scale"));
    if (Number.isFinite(scale)) this.scale = Math.max(-4, Math.min(4, scale));
    if (/^[a-h][1-8][a-h][1-8][qrbn]?$/.test(params.get("gmove") || "")) this.urlMove = params.get("gmove");
    queueMicrotask(() => this.game.showTab("lens"));
  }

  viewParams() {
    const params = new URLSearchParams({ lens: "1", lhead: `${this.layer}:${this.head}`, scale: String(this.scale) });
    if (this.gridMove) params.set("gmove", this.gridMove);
    return params;
  }

  rememberView() {
    if (this.open) history.replaceState(null, "", `${location.pathname}?${this.viewParams()}${location.hash}`);
  }

  async copyLink() {
    try { await navigator.clipboard.writeText(location.href); $("lens-link-status").textContent = "link copied"; }
    catch (err) { $("lens-link-status").textContent = location.href; }
  }

  setOpen(open) {
    const was = this.open;
    this.open = open;
    if (!open && was && new URLSearchParams(location.search).get("lens") === "1") {
      history.replaceState(null, "", `${location.pathname}${location.hash}`);
    }
    if (open) this.onNodeChange(this.game.current);
  }

  url(quantity, params) {
    const base = `${this.page.urls.nodes}${this.node}/lens/`;
    return quantity ? `${base}${quantity}/?${new URLSearchParams(params)}` : base;
  }

  // GET until the worker has it (lib/poll.js: computing, or this analysis's queue is full: ask
  // again); null once a newer draw has started.
  async fetchLens(url, serial, what) {
    const waiting = () => this.progress(what, true);
    const body = await pollJson(url, { current: () => serial === this.serial, onPending: waiting, onBusy: waiting,
      deadlineMs: DEADLINE_MS, tooLong: `${what}: the worker has not answered yet` });
    if (body) this.progress(what, false);
    return body;
  }

  progress(what, waiting) {
    this.pending = this.pending || new Set();
    if (waiting) this.pending.add(what); else this.pending.delete(what);
    $("lens").setAttribute("aria-busy", String(this.pending.size > 0));
    this.statusEl.textContent = this.pending.size ? `computing ${[...this.pending].join(", ")} on a worker…` : "";
  }

  async onNodeChange(id) {
    if (!this.open) return;
    const serial = ++this.serial; // an older draw's answers are dropped from here on
    this.pending = new Set();
    let about;
    try {
      const res = await getJsonResponse(`${this.page.urls.nodes}${id}/lens/`);
      about = await res.json();
      if (!res.ok) throw new Error(about.error || `the lens answered ${res.status}`);
    } catch (err) { if (serial === this.serial) this.statusEl.textContent = err.message; return; }
    if (serial !== this.serial) return; // the user stepped on meanwhile
    const moved = id !== this.node;
    this.node = id; // the node and its move change together: no request pairs one with the other's
    this.about = about;
    this.san = new Map((about.moves || []).map((m) => [m.uci, m.san]));
    this.resetMove(moved);
    if (this.explainMissing()) return;
    this.neurons.onNodeChange(id, this.about);
    this.fillLayers();
    this.rememberView();
    this.loadCurves();
    if (this.headChosen || !this.hasGrid()) this.loadAblation(); // else the grid's strongest head, once drawn
  }

  // A new position: the shared link's move if legal here, else the move played (null: the top move,
  // known once the logit lens answers). The same position keeps the user's choice.
  resetMove(moved) {
    const linked = this.urlMove && this.san.has(this.urlMove) ? this.urlMove : null;
    this.urlMove = null;
    if (moved || !this.san.has(this.gridMove)) this.gridMove = linked || this.playedMove();
    $("lens-move-error").textContent = "";
  }

  playedMove() {
    const node = this.game.nodes[this.node], next = node && this.game.nodes[node.children[0]];
    return next && this.san.has(next.uci) ? next.uci : null;
  }

  sanOf(uci) { return this.san.get(uci) || uci; }

  hasGrid() { return !!(this.about.units || {}).head && !(this.about.unavailable || {}).policy; }

  chooseMove(uci) {
    if (!this.san.has(uci)) return;
    this.gridMove = uci;
    $("lens-move-error").textContent = "";
    this.serial++; // the older move's curves and grid are dropped
    this.loadCurves();
    if (this.headChosen) this.loadAblation();
  }

  // A typed move, in SAN ("Nf3", "exd5", "O-O", "e8=Q") or UCI; an illegal one is said, not sent.
  typeMove(text) {
    const typed = text.trim().replace(/[+#!?]+$/, "").replace(/0/g, "O");
    const found = [...this.san].find(([uci, san]) => uci === typed.toLowerCase() || san.replace(/[+#]$/, "") === typed);
    if (!found) { $("lens-move-error").textContent = `${text.trim() || "An empty move"} is not a legal move here.`; return; }
    $("lens-move-input").value = "";
    this.chooseMove(found[0]);
  }

  // The whole lens, or one of its parts, is not there for this network: say why.
  explainMissing() {
    const un = this.about.unavailable || {};
    $("lens-body").hidden = !!un.lens || !!this.about.error;
    $("lens-why").textContent = un.lens ? `No lens: ${un.lens}.` : this.about.error || "";
    const noPolicy = un.policy ? `No policy curves or head grid: ${un.policy}.` : "";
    const noHeads = !(this.about.units || {}).head ? `No heads to remove: ${un.head || "this network has no attention heads"}.` : "";
    $("lens-part-why").textContent = [noPolicy, noHeads].filter(Boolean).join(" ");
    const node = this.game.nodes[this.node];
    if (!un.lens && node.outcome) { $("lens-why").textContent = "The game is over here: there is no move to take apart."; $("lens-body").hidden = true; return true; }
    return !!un.lens;
  }

  fillLayers() {
    const heads = (this.about.units || {}).head;
    $("lens-ablate").hidden = !heads;
    if (!heads) return;
    this.layer = Math.min(Math.max(this.layer, 0), heads.layers - 1);
    const sel = $("lens-layer");
    sel.innerHTML = Array.from({ length: heads.layers }, (_, l) => `<option value="${l}">${l}</option>`).join("");
    sel.value = String(this.layer);
    this.fillHeads();
    $("lens-scale").value = String(this.scale);
    $("lens-scale-value").textContent = this.scale.toFixed(2);
  }

  fillHeads() {
    const heads = this.about.units.head, sel = $("lens-head");
    this.head = Math.min(Math.max(this.head, 0), heads.per_layer - 1);
    sel.innerHTML = Array.from({ length: heads.per_layer }, (_, h) => `<option value="${h}">${h}</option>`).join("");
    sel.value = String(this.head);
  }

  // The curves of the chosen move beside the network's top moves (from the analysis's policy, or the
  // lens's own top 4 when the analysis has none yet); then the grid of the chosen move.
  async loadCurves() {
    if ((this.about.unavailable || {}).policy) { this.drawScores(null); return; }
    const serial = this.serial;
    try {
      const top = (this.game.results.get(this.node)?.eval?.policy || []).map(([uci]) => uci).filter((uci) => this.san.has(uci));
      const ask = (moves) => this.fetchLens(this.url("logit", moves.length ? { moves: moves.join(",") } : {}), serial, "the logit lens");
      const chosen = this.gridMove ? [this.gridMove] : [];
      let body = await ask(top.length ? [...new Set([...chosen, ...top])].slice(0, 4) : []);
      if (serial !== this.serial) return;
      if (body && this.gridMove && !body.curves[this.gridMove]) {
        body = await ask([this.gridMove, ...Object.keys(body.curves).filter((m) => m !== this.gridMove)].slice(0, 4));
      }
      if (!body || serial !== this.serial) return;
      this.gridMove = this.gridMove || body.top[body.top.length - 1];
      this.curves = body;
      this.drawCurves(body);
      this.fillGridMoves(Object.keys(body.curves));
      this.loadGrid();
    } catch (err) {
      $("lens-curves").textContent = err.message;
      if (!this.headChosen) this.loadAblation();
    }
  }

  // The first readout point from which the final top move (the network's own) stays the top move.
  static settlesAt(body) {
    const final = body.top[body.top.length - 1];
    let at = body.top.length - 1;
    while (at > 0 && body.top[at - 1] === final) at--;
    return at;
  }

  // Probability of each shown move per readout point (x), and the top move per point below.
  drawCurves(body) {
    const w = 420, h = 160, pad = 28, n = body.readouts.length, x = (i) => pad + (i * (w - 2 * pad)) / Math.max(n - 1, 1);
    const y = (p) => h - pad - p * (h - 2 * pad);
    const lines = Object.entries(body.curves).map(([uci, pts], k) => {
      const d = pts.map((pt, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(pt.prob).toFixed(1)}`).join("");
      return `<path d="${d}" fill="none" stroke="${COLOURS[k]}" stroke-width="${uci === this.gridMove ? 3 : 2}"><title>${escapeHtml(this.sanOf(uci))}</title></path>`;
    }).join("");
    const played = this.playedMove();
    const legend = Object.keys(body.curves).map((uci, k) =>
      `<span style="color:${COLOURS[k]}">■ ${escapeHtml(this.sanOf(uci))}${uci === played ? " (played)" : ""}</span>`).join(" ");
    const settles = Lens.settlesAt(body), ranks = body.curves[this.gridMove];
    const settleX = x(settles);
    $("lens-curves").innerHTML = `<svg viewBox="0 0 ${w} ${h}" class="lens-chart" role="img" aria-label="probability of each move per readout point">
      <line x1="${pad}" y1="${y(0)}" x2="${w - pad}" y2="${y(0)}" stroke="#999"/><line x1="${pad}" y1="${y(1)}" x2="${w - pad}" y2="${y(1)}" stroke="#ddd"/>
      <text x="2" y="${y(1) + 4}" font-size="10">1</text><text x="2" y="${y(0) + 4}" font-size="10">0</text>
      <line x1="${settleX}" y1="${y(1)}" x2="${settleX}" y2="${y(0)}" stroke="#111" stroke-dasharray="3 3"><title>settles here</title></line>${lines}</svg>
      <div class="small">${legend}</div>`;
    const rankOf = (i) => (ranks ? `<br><span class="lens-rank" title="${escapeHtml(this.sanOf(this.gridMove))}'s rank here">#${ranks[i].rank}</span>` : "");
    $("lens-strip").innerHTML = body.readouts.map((name, i) =>
      `<span class="lens-cell${i === settles ? " lens-settles" : ""}" data-readout="${i}" title="${escapeHtml(name)}: top move ${escapeHtml(this.sanOf(body.top[i]))} (p ${(100 * body.top_prob[i]).toFixed(1)}%)${body.score ? `, White's score ${body.score[i].toFixed(3)}` : ""}">
        <b>${escapeHtml(name)}</b><br>${escapeHtml(this.sanOf(body.top[i]))}${rankOf(i)}</span>`).join("");
    const final = this.sanOf(body.top[body.top.length - 1]);
    $("lens-settles").dataset.readout = String(settles);
    $("lens-settles").textContent = `Settles at ${body.readouts[settles]} (point ${settles} of 0 to ${body.readouts.length - 1}): ` +
      `${final} is the top move from there to the output.` + (ranks ? ` #: ${this.sanOf(this.gridMove)}'s rank at each point.` : "");
    this.drawScores(body.score);
  }

  drawScores(score) {
    $("lens-score").textContent = score ? `White's expected score by readout: ${score.map((s) => s.toFixed(2)).join(" → ")}` : "";
  }

  // The played move first, then the curves' moves (the top ones and a typed one); values in UCI, labels in SAN.
  fillGridMoves(moves) {
    const played = this.playedMove();
    moves = [...new Set([...(played ? [played] : []), this.gridMove, ...moves])].filter((m) => this.san.has(m));
    $("lens-grid-move").innerHTML = moves.map((m) =>
      `<option value="${m}">${escapeHtml(this.sanOf(m))}${m === played ? " (played)" : ""}</option>`).join("");
    $("lens-grid-move").value = this.gridMove;
  }

  async loadGrid() {
    if (!(this.about.units || {}).head || !this.gridMove || !this.san.has(this.gridMove)) return;
    const serial = this.serial;
    this.rememberView();
    try {
      const body = await this.fetchLens(this.url("grid", { move: this.gridMove }), serial, "the head grid");
      if (!body || serial !== this.serial) return;
      const strongest = this.drawGrid(body);
      if (!this.headChosen && strongest) { [this.layer, this.head] = strongest; this.fillLayers(); this.loadAblation(); }
    } catch (err) {
      $("lens-grid").textContent = err.message;
      if (!this.headChosen) this.loadAblation();
    }
  }

  // Each cell's value on its colour, the scale's legend, the strongest cell (largest |change|) marked;
  // returns that cell's [layer, head].
  drawGrid(body) {
    const sign = (v, d) => `${v >= 0 ? "+" : ""}${v.toFixed(d)}`;
    let strongest = null, best = -1;
    body.logit.forEach((row, l) => row.forEach((v, h) => { if (v != null && Math.abs(v) > best) { best = Math.abs(v); strongest = [l, h]; } }));
    const span = Math.max(1e-6, best);
    const move = escapeHtml(this.sanOf(body.move));
    const header = `<tr><th></th>${body.logit[0].map((_, h) => `<th>H${h}</th>`).join("")}</tr>`;
    const rows = body.logit.map((row, l) => `<tr><th>L${l}</th>${row.map((v, h) => {
      const max = strongest && strongest[0] === l && strongest[1] === h;
      return v == null ? `<td class="lens-grid-cell" data-layer="${l}" data-head="${h}">–</td>` :
        `<td class="lens-grid-cell${max ? " lens-grid-max" : ""}" data-layer="${l}" data-head="${h}" data-value="${v}" style="background:${diverging(v, span)};color:${Math.abs(v) > 0.6 * span ? "#fff" : "inherit"}"
        title="layer ${l} head ${h} removed: ${move}'s logit ${sign(v, 3)}${body.exact[l][h] ? "" : " (attribution estimate)"}${body.score && body.score[l][h] != null ? `, White's score ${sign(body.score[l][h], 3)}` : ""}${max ? " (the strongest)" : ""}">${body.exact[l][h] ? "" : "~"}${sign(v, 2)}</td>`;
    }).join("")}</tr>`).join("");
    const legend = `<div class="lens-legend" id="lens-grid-legend" data-span="${span}"><span>${sign(-span, 2)}</span>
      <span class="lens-legend-bar" style="background:linear-gradient(to right, ${diverging(-span, span)}, ${diverging(0, span)}, ${diverging(span, span)})"></span>
      <span>${sign(span, 2)}</span> <span class="muted">${move}'s logit change when the head is removed; outlined: the strongest${strongest ? ` (L${strongest[0]} H${strongest[1]})` : ""}</span></div>`;
    $("lens-grid").innerHTML = `<table class="lens-grid" data-move="${body.move}">${header}${rows}</table>${legend}`;
    $("lens-grid").querySelectorAll("td").forEach((td) => td.addEventListener("click", () => this.openHead(Number(td.dataset.layer), Number(td.dataset.head))));
    return strongest;
  }

  // A grid cell: that head's map in the attention explorer.
  openHead(layer, head) {
    const explorer = this.game.explorer;
    if (!this.page.network.has_attention) { this.statusEl.textContent = "This network has no attention maps to open."; return; }
    explorer.layer = layer;
    explorer.head = String(head);
    this.game.showTab("explorer");
  }

  async loadAblation() {
    if (!(this.about.units || {}).head) return;
    const serial = this.serial;
    this.rememberView();
    const params = { unit: "head", layer: this.layer, index: this.head, scale: this.scale };
    try {
      const body = await this.fetchLens(this.url("ablate", params), serial, "the scaled head");
      if (body && body.request.layer === this.layer && body.request.index === this.head && body.request.scale === this.scale) this.drawBars(body);
    } catch (err) { $("lens-bars").textContent = err.message; }
  }

  // The moves the scaled head changed most: clean and scaled probability side by side.
  drawBars(body) {
    const rows = [...body.policy].sort((a, b) => Math.max(b.clean, b.scaled) - Math.max(a.clean, a.scaled)).slice(0, BARS);
    const top = Math.max(1e-9, ...rows.map((r) => Math.max(r.clean, r.scaled)));
    const bar = (p, cls) => `<span class="bar ${cls}"><span style="width:${(100 * p / top).toFixed(1)}%"></span></span>`;
    $("lens-bars").innerHTML = rows.map((r) => `<div class="lens-bar-row" data-uci="${r.uci}" data-clean="${r.clean}" data-scaled="${r.scaled}"><span class="bar-label">${escapeHtml(this.sanOf(r.uci))}</span>
      ${bar(r.clean, "clean")}${bar(r.scaled, "scaled")}<span class="bar-value">${(100 * r.clean).toFixed(1)}% → ${(100 * r.scaled).toFixed(1)}%</span></div>`).join("");
    const s = body.clean_score == null ? "" : `White's expected score ${body.clean_score.toFixed(3)} → ${body.scaled_score.toFixed(3)}`;
    $("lens-bars-caption").textContent = `Layer ${body.request.layer} head ${body.request.index} × ${body.request.scale}: ${s}`;
  }
}
