// The Lens view's neuron panel (issue 28, item 7): a layer's most active units on the shown
// position; click one to draw its activation per square on the panel's board; a move's carriers
// (every unit's attribution to its logit, the strongest re-measured exactly, marked "exact"); and
// "where else does it fire": the unit's strongest positions over a pool (the head atlas's sample,
// this game, or pasted FENs), scanned by a worker with its progress shown, drawn as small boards
// beside the unit's mean map. The chosen unit can be removed or steered (its write times a scale: the
// `ablate` quantity with unit=mlp); carriers are small boards of their map that open the unit; a
// where-else position of this game shows what removing the unit does there.
// Every quantity comes from /api/jobs/<id>/nodes/<n>/lens/{neurons,neuron,carriers,where-else}/
// (202 while a worker computes it, polled here). Lens (lens.js) owns the panel and tells it the node.

import { Board, squareIndex } from "../lib/board.js";
import { escapeHtml } from "../lib/html.js";
import { pollJson } from "../lib/poll.js";
import { getJsonResponse } from "../lib/requests.js";

const MOVES = 12;
const MINI = 120; // px: a carrier's or a where-else position's board
const EFFECT_ROWS = 6;
const DEADLINE_MS = 900_000; // a where-else scan over hundreds of positions takes a while

const signed = (v, d = 3) => `${v >= 0 ? "+" : ""}${v.toFixed(d)}`;

// Orange for a positive activation, blue for a negative one; t in [-1, 1].
export function activationColour(t) {
  const a = Math.min(1, Math.abs(t));
  return t >= 0 ? `rgba(234, 88, 12, ${a.toFixed(3)})` : `rgba(37, 99, 235, ${a.toFixed(3)})`;
}

const PANEL = `
  <h3>Neurons <span class="muted small">a layer's most active units here; click one for its activation on each square</span></h3>
  <p id="neurons-why" class="muted small" role="status"></p>
  <div id="neurons-body">
    <div class="controls lens-controls"><label>Layer <select id="neurons-layer"></select></label>
      <span id="neurons-status" class="muted small" role="status"></span></div>
    <div class="neurons-row">
      <ol id="neurons-units" class="neurons-units"></ol>
      <div class="neurons-map"><div id="neurons-board"></div><p id="neurons-map-caption" class="muted small"></p></div>
    </div>
    <h3>Remove or steer <span id="neurons-steer-name">a unit</span> <span class="muted small">its write times the scale:
      0 removes it, 1 is clean, 2 doubles, -1 flips (-4 to 4)</span></h3>
    <form id="neurons-steer-form" class="controls lens-controls" novalidate>
      <label>Scale <input type="number" id="neurons-scale" min="-4" max="4" step="0.25" value="0" aria-label="the unit's scale"></label>
      <button type="submit" id="neurons-steer" disabled>Apply</button>
      <span id="neurons-steer-status" class="muted small" role="status"></span>
    </form>
    <ol id="neurons-effect" class="neurons-list"></ol>
    <p id="neurons-effect-caption" class="muted small"></p>
    <h3>Carriers <span class="muted small">each unit's attribution to
      <select id="neurons-move" aria-label="the move whose carriers are listed"></select>'s logit (one backward pass); the strongest re-measured by removing the unit</span></h3>
    <ol id="neurons-carriers" class="neurons-boards"></ol>
    <p id="neurons-carriers-note" class="muted small"></p>
    <h3>Where else does <span id="neurons-unit-name">a unit</span> fire?</h3>
    <div class="controls lens-controls">
      <label>Over <select id="neurons-pool"><option value="atlas">the atlas sample (256 positions)</option>
        <option value="game">this game's positions</option><option value="fens">FENs I paste</option></select></label>
      <button type="button" id="neurons-scan" disabled>Scan</button>
      <progress id="neurons-progress" max="1" value="0" hidden></progress>
      <span id="neurons-scan-status" class="muted small" role="status"></span>
    </div>
    <textarea id="neurons-fens" rows="4" hidden placeholder="one FEN a line (at most 512)" aria-label="FENs to scan"></textarea>
    <div class="neurons-row" id="neurons-where-row" hidden>
      <div class="neurons-map"><div id="neurons-mean-board"></div><p id="neurons-mean-caption" class="muted small"></p></div>
      <ol id="neurons-where" class="neurons-boards"></ol>
    </div>
  </div>`;

export class Neurons {
  constructor(page, game, root) {
    this.page = page;
    this.game = game;
    this.root = root;
    root.innerHTML = PANEL;
    this.$ = (id) => root.querySelector(`#${id}`);
    this.layer = 0; this.unit = null; this.move = null;
    // Each part's draw number: an answer to an older ask of that part is dropped.
    this.unitsSerial = 0; this.mapSerial = 0; this.carriersSerial = 0; this.scanSerial = 0; this.steerSerial = 0;
    this.san = new Map();
    this.board = new Board(this.$("neurons-board"), { coordinates: true });
    this.meanBoard = new Board(this.$("neurons-mean-board"), { coordinates: true, size: 2 * MINI });
    this.$("neurons-layer").addEventListener("change", (e) => { this.layer = Number(e.target.value); this.unit = null; this.loadUnits(); });
    this.$("neurons-move").addEventListener("change", (e) => { this.move = e.target.value; this.loadCarriers(); });
    this.$("neurons-pool").addEventListener("change", (e) => { this.$("neurons-fens").hidden = e.target.value !== "fens"; });
    this.$("neurons-scan").addEventListener("click", () => this.scan());
    this.$("neurons-steer-form").addEventListener("submit", (e) => { e.preventDefault(); this.steer(); });
  }

  sanOf(uci) { return this.san.get(uci) || uci; }

  url(quantity, params) { return `${this.page.urls.nodes}${this.node}/lens/${quantity}/${params ? `?${new URLSearchParams(params)}` : ""}`; }

  // Ask until the worker has it (lib/poll.js); a pending answer's `poll` is asked next (a scan
  // of pasted FENs is not posted again); null once a newer draw (counter) began.
  poll(ask, serial, counter, onProgress = () => {}) {
    return pollJson((pending) => (pending?.poll ? getJsonResponse(pending.poll) : ask()), {
      current: () => serial === this[counter], onPending: onProgress, onBusy: onProgress,
      deadlineMs: DEADLINE_MS, tooLong: "the worker has not answered yet" });
  }

  get(quantity, params, what, counter) {
    const serial = ++this[counter], status = this.$("neurons-status");
    status.textContent = `computing ${what} on a worker…`;
    return this.poll(() => getJsonResponse(this.url(quantity, params)), serial, counter)
      .then((body) => { if (body) status.textContent = ""; return body; });
  }

  // The lens tells the panel its node and what the network offers (lens.js onNodeChange).
  onNodeChange(id, about) {
    this.node = id;
    this.san = new Map((about.moves || []).map((m) => [m.uci, m.san]));
    const kinds = about.neurons || {}, un = about.unavailable || {};
    this.kind = kinds.mlp ? "mlp" : Object.keys(kinds)[0];
    this.squares = this.kind ? kinds[this.kind].squares : false;
    this.$("neurons-body").hidden = !this.kind;
    this.$("neurons-why").textContent = this.kind ? "" : `No neurons: ${un.neurons || "this network has no units with activations"}.`;
    if (!this.kind) return;
    this.units = about.units[this.kind];
    this.fillLayers();
    this.fillMoves(un.policy);
    this.board.setPosition(this.game.nodes[id].fen);
    this.board.setHeat(null);
    this.$("neurons-map-caption").textContent = this.squares ? "" : "These units have no squares: one activation per position.";
    this.$("neurons-effect").innerHTML = ""; this.$("neurons-effect-caption").textContent = "";
    this.$("neurons-where").innerHTML = ""; this.$("neurons-where-row").hidden = true; this.$("neurons-scan-status").textContent = "";
    this.loadUnits();
    this.loadCarriers();
  }

  fillLayers() {
    this.layer = Math.min(this.layer, this.units.layers - 1);
    const sel = this.$("neurons-layer");
    sel.innerHTML = Array.from({ length: this.units.layers }, (_, l) => `<option value="${l}">${l}</option>`).join("");
    sel.value = String(this.layer);
  }

  // The network's top moves here (its policy, once known) and the move played.
  fillMoves(noPolicy) {
    const sel = this.$("neurons-move"), node = this.game.nodes[this.node];
    const played = this.game.nodes[node.children[0]]?.uci;
    const policy = (this.game.results.get(this.node)?.eval?.policy || []).slice(0, MOVES).map(([uci]) => uci);
    const moves = [...new Set([...(played ? [played] : []), ...policy])].filter((m) => this.san.has(m));
    this.noPolicy = !!noPolicy;
    this.$("neurons-carriers").innerHTML = noPolicy ? `<li class="muted">${escapeHtml(noPolicy)}</li>` : "";
    if (noPolicy || !moves.length) { sel.innerHTML = ""; this.move = null; return; }
    if (!moves.includes(this.move)) this.move = moves[0];
    sel.innerHTML = moves.map((m) => `<option value="${m}">${escapeHtml(this.sanOf(m))}${m === played ? " (played)" : ""}</option>`).join("");
    sel.value = this.move;
  }

  async loadUnits() {
    const list = this.$("neurons-units");
    list.innerHTML = `<li class="muted">…</li>`;
    try {
      const body = await this.get("neurons", { unit: this.kind, layer: this.layer, top: 10 }, "the most active units", "unitsSerial");
      if (!body) return;
      list.innerHTML = body.units.map((u) => `<li><button type="button" class="link neurons-unit" data-index="${u.index}"
        title="mean ${signed(u.mean)} over the squares">unit ${u.index}</button> peak ${signed(u.peak)}${u.square ? ` on ${u.square}` : ""}</li>`).join("");
      list.querySelectorAll("button").forEach((b) => b.addEventListener("click", () => this.pickUnit(Number(b.dataset.index))));
      if (this.unit === null && body.units.length) this.pickUnit(body.units[0].index);
      else if (this.unit !== null) this.pickUnit(this.unit);
    } catch (err) { list.innerHTML = `<li class="muted">${escapeHtml(err.message)}</li>`; }
  }

  async pickUnit(index) {
    this.unit = index;
    this.root.querySelectorAll(".neurons-unit").forEach((b) => b.classList.toggle("selected", Number(b.dataset.index) === index));
    this.$("neurons-unit-name").textContent = `unit ${this.layer}:${index}`;
    this.$("neurons-steer-name").textContent = `unit ${this.layer}:${index}`;
    this.$("neurons-scan").disabled = false;
    this.$("neurons-steer").disabled = !this.canSteer();
    if (this.canSteer()) this.steer();
    if (!this.squares) return;
    try {
      const body = await this.get("neuron", { unit: this.kind, layer: this.layer, index }, "the unit's map", "mapSerial");
      if (body && body.request.index === this.unit && body.request.layer === this.layer) this.drawMap(body);
    } catch (err) { this.$("neurons-map-caption").textContent = err.message; }
  }

  drawMap(body) {
    const span = Math.max(1e-9, ...body.map.map(Math.abs));
    this.board.setHeat(body.map.map((v) => v / span), activationColour, 0.75);
    this.board.setMarks({ [squareIndex(body.square)]: "query" });
    this.$("neurons-board").dataset.unit = `${body.request.layer}:${body.request.index}`;
    this.$("neurons-map-caption").textContent = `Unit ${body.request.layer}:${body.request.index}: peak ${signed(body.peak)} on ${body.square} (orange positive, blue negative; scale ±${span.toFixed(3)})`;
  }

  async loadCarriers() {
    if (!this.move) return;
    const list = this.$("neurons-carriers");
    list.innerHTML = `<li class="muted">…</li>`;
    try {
      const body = await this.get("carriers", { unit: this.kind, move: this.move, top: 8 }, "the carriers", "carriersSerial");
      if (!body || body.move !== this.move) return;
      list.innerHTML = body.carriers.map((c) => `<li data-layer="${c.layer}" data-index="${c.index}">
        <button type="button" class="mini" title="open unit ${c.layer}:${c.index}" aria-label="open unit ${c.layer}:${c.index}"></button>
        unit ${c.layer}:${c.index} attribution ${signed(c.attribution)}${c.exact === null ? " (estimate)" : `, <b class="exact" title="measured by removing the unit">exact ${signed(c.exact)}</b>`}</li>`).join("");
      const fen = this.game.nodes[this.node].fen, boards = [];
      list.querySelectorAll("li").forEach((li) => {
        const layer = Number(li.dataset.layer), index = Number(li.dataset.index), button = li.querySelector("button");
        const board = new Board(button, { coordinates: false, size: MINI });
        board.setPosition(fen);
        boards.push({ board, layer, index, li });
        button.addEventListener("click", () => this.openUnit(layer, index));
      });
      this.$("neurons-carriers-note").textContent = `The strongest of ${body.units} units ranked by one backward pass; "exact": ` +
        `${this.sanOf(body.move)}'s logit change measured with the unit removed. Each board is the unit's activation here; click one to open the unit.`;
      if (this.squares) this.drawCarrierMaps(boards, this.carriersSerial);
    } catch (err) { list.innerHTML = `<li class="muted">${escapeHtml(err.message)}</li>`; }
  }

  // Each carrier's activation on its small board, one after the other (the worker's queue is shared).
  async drawCarrierMaps(boards, serial) {
    for (const { board, layer, index, li } of boards) {
      if (serial !== this.carriersSerial) return;
      try {
        const body = await this.poll(() => getJsonResponse(this.url("neuron", { unit: this.kind, layer, index })), serial, "carriersSerial");
        if (!body) return;
        const span = Math.max(1e-9, ...body.map.map(Math.abs));
        board.setHeat(body.map.map((v) => v / span), activationColour, 0.75);
        li.dataset.drawn = "1";
      } catch (err) { li.title = err.message; }
    }
  }

  // A carrier clicked: its layer's units, that unit picked (its map, its removal, where else it fires).
  openUnit(layer, index) {
    this.layer = layer;
    this.$("neurons-layer").value = String(layer);
    this.unit = index;
    this.loadUnits();
    this.$("neurons-board").scrollIntoView({ block: "nearest" });
  }

  // The ablate quantity takes the unit kinds the lens can scale (about.units); a scale in [-4, 4].
  canSteer() { return this.unit !== null && !!this.units; }

  async steer() {
    const scale = Number(this.$("neurons-scale").value), status = this.$("neurons-steer-status");
    if (!Number.isFinite(scale) || scale < -4 || scale > 4) { status.textContent = "The scale must be a number from -4 to 4."; return; }
    const layer = this.layer, index = this.unit;
    try {
      const body = await this.get("ablate", { unit: this.kind, layer, index, scale }, "the scaled unit", "steerSerial");
      if (body) this.drawEffect(body, this.$("neurons-effect"), this.$("neurons-effect-caption"));
      status.textContent = "";
    } catch (err) { status.textContent = err.message; }
  }

  // The moves whose probability the scaled unit changed most, clean → scaled, and the score.
  drawEffect(body, list, caption) {
    const r = body.request;
    list.dataset.unit = `${r.layer}:${r.index}`; list.dataset.scale = String(r.scale);
    list.innerHTML = body.policy.slice(0, EFFECT_ROWS).map((m) => `<li data-uci="${m.uci}" data-clean="${m.clean}" data-scaled="${m.scaled}">
      ${escapeHtml(this.sanOf(m.uci))} ${(100 * m.clean).toFixed(1)}% → ${(100 * m.scaled).toFixed(1)}%</li>`).join("");
    const score = body.clean_score == null ? "" : `; White's expected score ${body.clean_score.toFixed(3)} → ${body.scaled_score.toFixed(3)}`;
    caption.textContent = `Unit ${r.layer}:${r.index} × ${r.scale}: the moves it changes most${score}.`;
  }

  scanRequest() {
    const fields = { unit: this.kind, layer: this.layer, index: this.unit, top: 8 };
    const pool = this.$("neurons-pool").value;
    const headers = { Accept: "application/json" };
    if (pool !== "fens") return fetch(this.url("where-else", { ...fields, pool }), { headers });
    return fetch(this.url("where-else"), { method: "POST", headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ ...fields, fens: this.$("neurons-fens").value }) });
  }

  async scan() {
    if (this.unit === null) return;
    const serial = ++this.scanSerial, bar = this.$("neurons-progress"), status = this.$("neurons-scan-status");
    bar.hidden = false; bar.value = 0;
    status.textContent = "queued…";
    this.$("neurons-where").innerHTML = "";
    const progress = (b) => {
      if (!b.total) return;
      bar.max = b.total; bar.value = b.done;
      status.textContent = `${b.done} of ${b.total} positions`;
    };
    try {
      const body = await this.poll(() => this.scanRequest(), serial, "scanSerial", progress);
      if (!body) return;
      bar.max = 1; bar.value = 1;
      status.textContent = `${body.scanned} positions scanned${body.skipped ? ` (${body.skipped} without a legal move skipped)` : ""}`;
      this.drawWhere(body);
    } catch (err) { status.textContent = err.message; bar.hidden = true; }
  }

  // The strongest positions as small boards (the peak square marked), beside the unit's mean map; a
  // game's position links to it and shows what removing the unit does there; a click on a FEN copies it.
  drawWhere(body) {
    const nodeOf = new Map(Object.values(this.game.nodes).map((n) => [n.fen, n.id]));
    const list = this.$("neurons-where"), unit = { layer: body.request.layer, index: body.request.index };
    this.$("neurons-where-row").hidden = false;
    this.drawMean(body);
    list.innerHTML = body.top.map((f) => {
      const id = nodeOf.get(f.fen), fen = `<code class="neurons-fen" title="click to copy">${escapeHtml(f.fen)}</code>`;
      return `<li data-fen="${escapeHtml(f.fen)}"${id === undefined ? "" : ` data-node="${id}"`}><div class="mini"></div>peak ${signed(f.peak)}${f.square ? ` on ${f.square}` : ""}
        ${id === undefined ? "" : `<a href="#${id}">position ${id}</a>`}<span class="neurons-removed small"></span><br>${fen}</li>`;
    }).join("");
    const serial = this.scanSerial;
    list.querySelectorAll("li").forEach((li, k) => {
      const board = new Board(li.querySelector(".mini"), { coordinates: false, size: MINI }), found = body.top[k];
      board.setPosition(found.fen);
      if (found.square) board.setMarks({ [squareIndex(found.square)]: "query" });
      if (li.dataset.node !== undefined) this.removalAt(Number(li.dataset.node), unit, li.querySelector(".neurons-removed"), serial);
    });
    list.querySelectorAll("code").forEach((code) => code.addEventListener("click", async () => {
      try { await navigator.clipboard.writeText(code.textContent); this.$("neurons-scan-status").textContent = "FEN copied"; }
      catch (err) { window.getSelection().selectAllChildren(code); }
    }));
  }

  drawMean(body) {
    const caption = this.$("neurons-mean-caption");
    this.meanBoard.setPieces(new Array(64).fill(null));
    if (!body.squares) { this.meanBoard.setHeat(null); caption.textContent = "These units have no squares: no mean map."; return; }
    const span = Math.max(1e-9, ...body.mean.map(Math.abs));
    this.meanBoard.setHeat(body.mean.map((v) => v / span), activationColour, 0.85);
    this.$("neurons-mean-board").dataset.drawn = "1";
    caption.textContent = `Unit ${body.request.layer}:${body.request.index}'s mean activation per square over ${body.scanned} positions (scale ±${span.toFixed(3)}).`;
  }

  // What removing the unit does at one of this game's positions: its top move's probability, clean → removed.
  async removalAt(node, { layer, index }, out, serial) {
    if (this.noPolicy) return;
    const url = `${this.page.urls.nodes}${node}/lens/ablate/?${new URLSearchParams({ unit: this.kind, layer, index, scale: 0 })}`;
    try {
      const body = await this.poll(() => getJsonResponse(url), serial, "scanSerial");
      if (!body) return;
      const about = await (await getJsonResponse(`${this.page.urls.nodes}${node}/lens/`)).json();
      const san = new Map((about.moves || []).map((m) => [m.uci, m.san]));
      const top = [...body.policy].sort((a, b) => b.clean - a.clean)[0], moved = body.policy[0];
      out.dataset.change = String(moved.scaled - moved.clean);
      out.textContent = ` removing it there: top move ${san.get(top.uci) || top.uci} ${(100 * top.clean).toFixed(1)}% → ${(100 * top.scaled).toFixed(1)}%` +
        (body.clean_score == null ? "" : `, White's score ${body.clean_score.toFixed(3)} → ${body.scaled_score.toFixed(3)}`);
    } catch (err) { out.textContent = ` ${err.message}`; }
  }
}
