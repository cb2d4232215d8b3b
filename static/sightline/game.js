// The game page: renders the stored analysis, then merges websocket updates
// (snapshot / ply / progress / status) by node id, so duplicates are harmless.
import { Board, applyUci, squareIndex, squareName } from "./board.js";
import { Explorer } from "./explorer.js";
import { fmtDuration } from "./home.js";

const MAX_ARROWS = 5, ARROW_MIN = 0.04;

const whiteToMove = (node) => node.fen.split(" ")[1] === "w";
const fmtPct = (p) => (100 * p).toFixed(p < 0.1 ? 1 : 0) + "%";
// The PGN's own move and position assessments (NAGs), as PGN readers show them.
const NAG_GLYPHS = { 1: "!", 2: "?", 3: "!!", 4: "??", 5: "!?", 6: "?!", 7: "□", 10: "=", 13: "∞", 14: "⩲", 15: "⩱",
  16: "±", 17: "∓", 18: "+−", 19: "−+", 22: "⨀", 23: "⨀", 32: "⟳", 33: "⟳", 36: "→", 37: "→", 40: "↑", 41: "↑",
  132: "⇆", 133: "⇆", 146: "N" };
const nagText = (nags) => (nags || []).map((n) => NAG_GLYPHS[n] || `$${n}`).join("");
// Comments keep their [%eval ...] / [%clk ...] commands when stored and exported; the list shows the words.
const commentText = (text) => (text || "").replace(/\[%[^\]]*\]/g, "").trim();
const commentSpan = (text, extra = "") => {
  const span = document.createElement("span");
  span.className = `comment ${extra}`.trim();
  span.textContent = text;
  return span;
};
// A centipawn-style figure from an expected score, with the project's own win-probability
// formula inverted (analysis.evaluator.score_to_centipawns; the slope comes with the page).
export function scoreToCentipawns(score, slope) {
  const s = Math.min(Math.max(score, 1e-9), 1 - 1e-9);
  return Math.max(-10000, Math.min(10000, Math.round(-Math.log(1 / s - 1) / slope)));
}
const fmtPawns = (cp) => (cp > 0 ? "+" : cp < 0 ? "−" : "") + (Math.abs(cp) / 100).toFixed(Math.abs(cp) >= 1000 ? 0 : Math.abs(cp) >= 100 ? 1 : 2);
const fmtNum = (n) => (n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e4 ? (n / 1e3).toFixed(0) + "k" : String(n));

export function startGamePage(page) {
  const game = new GamePage(page);
  window.__sightline = game; // for tests and benchmarks
  return game;
}

class GamePage {
  constructor(page) {
    this.page = page;
    this.nodes = page.nodes;
    this.results = new Map();
    this.progress = new Map();
    this.deep = new Map(); // node -> the latest "deep" message (a deeper search's lines)
    this.deepRun = null; // the id of this page's running deeper search
    this.status = page.snapshot.job;
    this.current = 0;
    this.flipped = false;
    this.latencies = [];
    this.graphHistory = []; // [network points, search points] at each redraw: the graph filling live
    this.messages = 0;
    this.findMainline();
    this.board = new Board(document.getElementById("board"));
    this.board.enableMoves({ canMove: (sq) => this.canMove(sq), targets: (sq) => this.targets(sq),
                             onMove: (from, to) => this.playMove(from, to) });
    this.explorer = new Explorer(page, this);
    this.mergeSnapshot(page.snapshot);
    const fromHash = parseInt(location.hash.slice(1), 10);
    this.renderMoves();
    this.go(Number.isInteger(fromHash) && this.nodes[fromHash] ? fromHash : 0);
    this.wire();
    this.renderStatus();
    this.scheduleGraph();
  }

  // ---- data --------------------------------------------------------------
  findMainline() {
    this.mainline = [];
    for (let id = 0; id !== undefined; id = this.nodes[id].children[0]) this.mainline.push(id);
  }

  // Nodes added by a line played on the board (here, or by another viewer of the job).
  mergeNodes(items) {
    let added = false;
    for (const n of items) {
      if (this.nodes[n.id]) continue;
      this.nodes[n.id] = n;
      const parent = this.nodes[n.parent];
      if (parent && !parent.children.includes(n.id)) parent.children.push(n.id);
      added = true;
    }
    if (added) { this.findMainline(); this.renderMoves(); this.markCurrent(); }
    return added;
  }

  // The job has nodes this page has not seen (a message named one, or the count grew): fetch them.
  async fetchNodes() {
    if (this._fetchingNodes) return;
    this._fetchingNodes = true;
    try {
      const res = await fetch(this.page.urls.state, { headers: { Accept: "application/json" } });
      if (res.ok) { const state = await res.json(); this.mergeNodes(state.nodes); this.mergeSnapshot(state); this.refreshAll(); }
    } finally { this._fetchingNodes = false; }
  }

  mergeSnapshot(snap) {
    if (snap.job) this.status = snap.job;
    if (snap.job && snap.job.total > this.nodes.length) this.fetchNodes();
    for (const [id, parts] of Object.entries(snap.results || {})) this.mergePly(Number(id), parts);
  }

  mergePly(id, parts) {
    if (this.firstPlyAt === undefined && (parts.eval || parts.search)) this.firstPlyAt = Date.now();
    const entry = this.results.get(id) || {};
    if (parts.eval) entry.eval = parts.eval;
    if (parts.search) { entry.search = parts.search; this.progress.delete(id); }
    if (parts.judgement) entry.judgement = parts.judgement;
    this.results.set(id, entry);
  }

  onMessage(msg) {
    this.messages += 1;
    if (msg.sent_at_ms) this.latencies.push(Date.now() - msg.sent_at_ms);
    if (msg.kind === "snapshot") { this.mergeSnapshot(msg); this.refreshAll(); return; }
    if (msg.kind === "ply" || msg.kind === "plies" || msg.kind === "judgements") {
      for (const item of msg.kind === "ply" ? [msg] : msg.items) {
        if (!this.nodes[item.node]) { this.fetchNodes(); continue; }
        this.mergePly(item.node, item);
        this.markMove(item.node);
        for (const child of this.nodes[item.node].children) this.markMove(child);
        if (item.node === this.current || this.nodes[this.current].parent === item.node) this.renderPly();
      }
      this.renderStatus();
      this.scheduleGraph();
    } else if (msg.kind === "deep") {
      this.deep.set(msg.node, msg);
      if (msg.final && this.deepRun === msg.deep) this.deepRun = null;
      if (msg.node === this.current) this.renderDeeper();
    } else if (msg.kind === "nodes") {
      this.mergeNodes(msg.items);
    } else if (msg.kind === "progress") {
      this.progress.set(msg.node, msg);
      if (msg.node === this.current) this.renderProgress();
      this.renderStatus();
    } else if (msg.kind === "status") {
      this.status = msg;
      if (msg.total > this.nodes.length) this.fetchNodes();
      this.renderStatus();
      // Channel layers deliver at most once: when the job ends, fill any gap from the database.
      if (["done", "failed", "cancelled"].includes(msg.status)) this.reconcile();
    } else if (msg.kind === "live") {
      // The server lost its message queue and closes with 1013; htmx's websocket extension
      // reconnects with back-off, and the reconnect's snapshot fills what was missed.
      document.body.classList.add("ws-down");
      document.getElementById("job-status").title = msg.message;
    }
  }

  async reconcile() {
    const finished = this.status.status === "done";
    const complete = this.nodes.every((n) => {
      const r = this.results.get(n.id);
      return r?.eval && ((r.search && (r.judgement || n.parent === null)) || !finished);
    });
    if (complete) return;
    const res = await fetch(this.page.urls.state, { headers: { Accept: "application/json" } });
    if (res.ok) { this.mergeSnapshot(await res.json()); this.refreshAll(); }
  }

  refreshAll() { this.renderMoves(); this.renderPly(); this.renderStatus(); this.scheduleGraph(); }

  // Expected score for the side to move at a node: the search's when it has one.
  // The rules' result where the game is over on the board, for the side to move: 0 (mated) or 0.5.
  exactScore(id) {
    const outcome = this.nodes[id].outcome;
    return outcome ? (outcome.result === "1/2-1/2" ? 0.5 : 0) : null;
  }
  stmScore(id) {
    const exact = this.exactScore(id);
    if (exact != null) return exact;
    const r = this.results.get(id);
    if (!r) return null;
    if (r.search && r.search.score != null) return r.search.score;
    return r.eval ? r.eval.score : null;
  }
  whiteScore(id, source = null) {
    const r = this.results.get(id);
    let s = source === "eval" ? r?.eval?.score : source === "search" ? r?.search?.score : this.stmScore(id);
    if (s == null) return null;
    return whiteToMove(this.nodes[id]) ? s : 1 - s;
  }
  whiteWdl(id) {
    const exact = this.exactScore(id);
    if (exact != null) {
      const result = this.nodes[id].outcome.result;
      return result === "1-0" ? [1, 0, 0] : result === "0-1" ? [0, 0, 1] : [0, 1, 0];
    }
    const r = this.results.get(id);
    const wdl = (r?.search?.wdl) || r?.eval?.wdl;
    if (!wdl) return null;
    return whiteToMove(this.nodes[id]) ? wdl : [wdl[2], wdl[1], wdl[0]];
  }
  // The evaluation as people read it, White's view: "#3" / "#-2" where a search proved a mate
  // (or the game is over: "1-0", "0-1", "½-½"), else pawns ("+0.35") from the expected score.
  whiteEval(id) {
    const node = this.nodes[id], over = node.outcome;
    if (over) return over.result === "1/2-1/2" ? "½-½" : over.result;
    const mate = this.results.get(id)?.search?.mate;
    if (mate) return `#${whiteToMove(node) ? mate : -mate}`;
    const ws = this.whiteScore(id);
    return ws == null ? null : fmtPawns(scoreToCentipawns(ws, this.page.win_percent_slope));
  }

  // The stored judgement of the move that led to a node (both values from its parent position,
  // see webapp/analyses/judgements.py): {glyph, name, drop, ...}; null until the worker has made it.
  judgement(id) {
    const j = this.results.get(id)?.judgement;
    return j && j.glyph ? j : null;
  }
  judgementTitle(id) {
    const j = this.results.get(id)?.judgement, node = this.nodes[id];
    if (!j) return "not judged yet";
    const by = j.source === "search" ? `${this.page.search.name}'s root statistics` : "the network (both successors in one batch)";
    // The scores are the mover's (a judgement compares two moves of one side): say whose.
    const mover = whiteToMove(node) ? "Black" : "White";
    const played = `${node.san} ${(100 * j.played_score).toFixed(1)}%${j.bound === "upper" ? " at most" : ""}`;
    return (j.glyph ? `${j.glyph} ${j.name}: ` : "") + (j.played === j.best ? `${node.san} is the best move`
      : `${played} vs ${j.best_san} ${(100 * j.best_score).toFixed(1)}% (best), expected scores for ${mover}`) +
      `; valued by ${by} before the move`;
  }

  // ---- navigation ----------------------------------------------------------
  go(id) {
    if (this.nodes[id] === undefined) return;
    this.current = id;
    history.replaceState(null, "", "#" + id);
    this.board.select(null);
    this.markCurrent();
    this.renderPly();
    this.renderShare();
    this.scheduleGraph();
    this.explorer.onNodeChange(id);
  }

  markCurrent() {
    document.querySelectorAll("#moves .move.current").forEach((m) => m.classList.remove("current"));
    const el = document.querySelector(`#moves .move[data-node="${this.current}"]`);
    if (!el) return;
    el.classList.add("current");
    // Scroll the move list only, never the page (scrollIntoView would move the window too).
    const box = document.getElementById("moves"), r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (r.top < b.top) box.scrollTop -= b.top - r.top;
    else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
  }

  // The side column's tabs: moves and position, the attention explorer, the network.
  showTab(name) {
    const tabs = { moves: ["tab-moves", "moves-pane"], explorer: ["explorer-open", "explorer"], network: ["network-open", "network-panel"] };
    for (const [key, [button, pane]] of Object.entries(tabs)) {
      document.getElementById(button).classList.toggle("active", key === name);
      document.getElementById(button).setAttribute("aria-selected", String(key === name));
      document.getElementById(pane).hidden = key !== name;
    }
    this.explorer.setOpen(name === "explorer");
  }

  // ---- playing moves -------------------------------------------------------------
  // A piece of the side to move, in a position where the game goes on.
  canMove(sq) {
    const node = this.nodes[this.current], piece = this.board.pieces[sq];
    if (!piece || node.outcome) return false;
    return (piece === piece.toUpperCase()) === whiteToMove(node);
  }

  // Where the piece on `sq` may go, from the network's policy (all legal moves) once it is known.
  targets(sq) {
    const policy = this.results.get(this.current)?.eval?.policy || [], from = squareName(sq);
    return [...new Set(policy.filter(([uci]) => uci.startsWith(from)).map(([uci]) => squareIndex(uci.slice(2, 4))))];
  }

  async playMove(from, to) {
    const node = this.nodes[this.current], piece = this.board.pieces[from];
    let uci = squareName(from) + squareName(to);
    const lastRank = whiteToMove(node) ? 7 : 0;
    if (piece && piece.toLowerCase() === "p" && Math.floor(to / 8) === lastRank && Math.abs((to % 8) - (from % 8)) <= 1) {
      const promo = await this.askPromotion(whiteToMove(node));
      if (!promo) return;
      uci += promo;
    }
    await this.addLine(this.current, [uci]);
  }

  // The promotion piece, from four buttons over the board (Escape or a click elsewhere: none).
  askPromotion(white) {
    const box = document.getElementById("promotion");
    box.replaceChildren();
    return new Promise((resolve) => {
      const done = (piece) => { box.hidden = true; document.removeEventListener("keydown", onKey, true); resolve(piece); };
      const onKey = (ev) => { if (ev.key === "Escape") { ev.stopPropagation(); done(null); } };
      for (const [letter, name] of [["q", "queen"], ["r", "rook"], ["b", "bishop"], ["n", "knight"]]) {
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.piece = letter;
        button.title = `promote to a ${name}`;
        button.innerHTML = `<svg viewBox="0 0 45 45" width="40" height="40"><use href="#${white ? "white" : "black"}-${name}"/></svg>`;
        button.addEventListener("click", () => done(letter));
        box.appendChild(button);
      }
      const cancel = document.createElement("button");
      cancel.type = "button"; cancel.className = "small"; cancel.textContent = "cancel";
      cancel.addEventListener("click", () => done(null));
      box.appendChild(cancel);
      box.hidden = false;
      document.addEventListener("keydown", onKey, true);
      box.querySelector("button").focus();
    });
  }

  // Add a line (UCI moves from node `parent`) to the job: the server checks it, the worker analyses it.
  async addLine(parent, moves) {
    const status = document.getElementById("move-status");
    let id = parent, known = true;
    for (const uci of moves) { // already in the tree: just go there
      const child = this.nodes[id].children.find((c) => this.nodes[c].uci === uci);
      if (child === undefined) { known = false; break; }
      id = child;
    }
    if (known) { status.textContent = ""; this.go(id); return; }
    if (!this.page.can_add_moves) {
      status.textContent = "Only the browser session that started this analysis can add moves to it.";
      return;
    }
    status.textContent = "adding…";
    const csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    let res, body;
    try {
      res = await fetch(this.page.urls.moves, { method: "POST", headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
                                                 body: JSON.stringify({ parent, moves }) });
      body = await res.json();
    } catch (err) { status.textContent = "The move could not be sent (the server did not answer); try again."; return; }
    if (!res.ok) { status.textContent = body.error || `The move was refused (${res.status}).`; return; }
    status.textContent = body.nodes.length ? `added ${body.nodes.map((n) => n.san).join(" ")}: analysing` : "";
    this.mergeNodes(body.nodes);
    this.go(body.node);
  }

  // Show where a line (UCI moves from the current position) leads, until the pointer leaves it.
  preview(moves) {
    let pieces = this.board.pieces.slice();
    for (const uci of moves) pieces = applyUci(pieces, uci);
    this.board.setPieces(pieces);
    const last = moves[moves.length - 1];
    this.board.setMarks({ [squareIndex(last.slice(0, 2))]: "lastmove preview", [squareIndex(last.slice(2, 4))]: "lastmove preview" });
    this.board.setArrows([]);
    document.getElementById("board").classList.add("previewing");
  }

  endPreview() {
    if (!document.getElementById("board").classList.contains("previewing")) return;
    document.getElementById("board").classList.remove("previewing");
    this.renderPly();
  }

  siblings(id) {
    const parent = this.nodes[id].parent;
    return parent === null ? [id] : this.nodes[parent].children;
  }

  key(ev) {
    if (ev.target.closest("input, select, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const node = this.nodes[this.current];
    let target = null;
    switch (ev.key) {
      case "ArrowLeft": target = node.parent; break;
      case "ArrowRight": target = node.children[0]; break;
      case "ArrowUp": case "ArrowDown": {
        const sib = this.siblings(this.current), i = sib.indexOf(this.current);
        target = sib[(i + (ev.key === "ArrowDown" ? 1 : sib.length - 1)) % sib.length];
        break;
      }
      case "Home": target = 0; break;
      case "End": { let id = this.current; while (this.nodes[id].children.length) id = this.nodes[id].children[0]; target = id; break; }
      case "f": this.flip(); ev.preventDefault(); return;
      default: return;
    }
    ev.preventDefault();
    if (target !== null && target !== undefined) this.go(target);
  }

  flip() {
    this.flipped = !this.flipped; this.board.setFlipped(this.flipped); this.explorer.setFlipped(this.flipped);
    this.renderShare();
  }

  // The current position's FEN (shown, and copied by the button) and its SVG download.
  renderShare() {
    document.getElementById("fen-text").value = this.nodes[this.current].fen;
    // With the explorer open, the picture carries its attention map (layer, head, query, mode).
    const params = this.explorer.open && this.explorer.data ? this.explorer.viewParams() : new URLSearchParams();
    if (this.flipped) params.set("flip", "1");
    const query = params.toString();
    document.getElementById("board-svg").href = `${this.page.urls.board_svg}${this.current}/board.svg${query ? `?${query}` : ""}`;
  }

  async copyFen() {
    const fen = this.nodes[this.current].fen, status = document.getElementById("share-status");
    try {
      await navigator.clipboard.writeText(fen);
      status.textContent = "FEN copied";
    } catch (err) { // no clipboard permission (http, old browser): select it for Ctrl+C instead
      const box = document.getElementById("fen-text");
      box.focus(); box.select();
      status.textContent = "FEN selected: press Ctrl+C";
    }
  }

  wire() {
    document.addEventListener("keydown", (ev) => this.key(ev));
    const click = (id, fn) => document.getElementById(id).addEventListener("click", fn);
    click("nav-start", () => this.go(0));
    click("nav-prev", () => { const p = this.nodes[this.current].parent; if (p !== null) this.go(p); });
    click("nav-next", () => { const c = this.nodes[this.current].children[0]; if (c !== undefined) this.go(c); });
    click("nav-end", () => this.key({ key: "End", target: document.body, preventDefault() {} }));
    click("nav-flip", () => this.flip());
    click("copy-fen", () => this.copyFen());
    click("tab-moves", () => this.showTab("moves"));
    if (document.getElementById("deeper")) { click("deeper-start", () => this.startDeeper()); click("deeper-stop", () => this.stopDeeper()); }
    click("network-open", () => this.showTab("network"));
    if (this.page.network.has_attention) click("explorer-open", () => this.showTab("explorer"));
    // Policy moves, PV moves and root moves carry data-line (UCI moves from the current position):
    // hover previews where they lead, a click adds that line.
    const panel = document.getElementById("ply-panel");
    const lineOf = (ev) => ev.target.closest("[data-line]")?.dataset.line.split(" ");
    panel.addEventListener("mouseover", (ev) => { const line = lineOf(ev); if (line) this.preview(line); });
    panel.addEventListener("mouseout", (ev) => { if (lineOf(ev) && !ev.relatedTarget?.closest?.("[data-line]")) this.endPreview(); });
    panel.addEventListener("click", (ev) => { const line = lineOf(ev); if (line) { this.endPreview(); this.addLine(this.current, line); } });
    document.getElementById("moves").addEventListener("click", (ev) => {
      const m = ev.target.closest(".move");
      if (m) this.go(Number(m.dataset.node));
    });
    document.body.addEventListener("htmx:wsBeforeMessage", (ev) => {
      ev.preventDefault(); // JSON, not HTML: handled here
      try { this.onMessage(JSON.parse(ev.detail.message)); } catch (err) { console.error(err); }
    });
    // Reconnect back-off. htmx's websocket extension starts its own over whenever a socket opens,
    // and while Redis is down every reconnect opens (snapshot, then 1013): every page came back
    // every half second however long the outage. Here a reconnect doubles the delay (1 s, 2 s, ...
    // 30 s, jittered) unless the connection it follows stayed up for LIVE_FOR_MS.
    const LIVE_FOR_MS = 10000;
    let openedAt = 0, failures = 0;
    window.htmx.config.wsReconnectDelay = () => {
      failures = openedAt && Date.now() - openedAt >= LIVE_FOR_MS ? 1 : failures + 1;
      openedAt = 0;
      return Math.min(30000, 1000 * 2 ** Math.min(failures - 1, 5)) * (0.5 + Math.random() / 2);
    };
    document.body.addEventListener("htmx:wsOpen", () => { openedAt = Date.now(); document.body.classList.remove("ws-down"); });
    document.body.addEventListener("htmx:wsClose", () => document.body.classList.add("ws-down"));
  }

  // ---- rendering -------------------------------------------------------------
  moveLabel(node, forceNumber) {
    const before = node.ply - 1, number = Math.floor(before / 2) + 1, white = before % 2 === 0;
    return white ? `${number}. ` : forceNumber ? `${number}... ` : "";
  }

  renderMoves() {
    const box = document.getElementById("moves");
    box.replaceChildren();
    const root = this.nodes[0];
    if (commentText(root.comment)) box.appendChild(commentSpan(commentText(root.comment), "game-comment"));
    if (!root.children.length) { box.insertAdjacentHTML("beforeend", '<p class="muted">A single position (no moves).</p>'); return; }
    box.appendChild(this.renderLine(root.children[0], true, true));
    this.markAll();
  }

  // A line follows first children from `id`; alternatives to each move follow that move in parentheses.
  renderLine(id, main, forceNumber) {
    const line = document.createElement("div");
    line.className = main ? "line main" : "line variation";
    let force = forceNumber;
    for (let cur = id; cur !== undefined; cur = this.nodes[cur].children[0]) {
      const node = this.nodes[cur];
      const span = document.createElement("span");
      span.className = "move";
      span.dataset.node = cur;
      span.innerHTML = `<span class="num">${this.moveLabel(node, force)}</span><span class="san">${node.san}</span><span class="nag"></span><span class="glyph"></span>`;
      span.querySelector(".nag").textContent = nagText(node.nags);
      if (commentText(node.starting_comment)) line.appendChild(commentSpan(commentText(node.starting_comment)));
      line.appendChild(span);
      force = false;
      if (commentText(node.comment)) { line.appendChild(commentSpan(commentText(node.comment))); force = true; }
      const siblings = node.parent === null ? [] : this.nodes[node.parent].children;
      if (siblings[0] === cur && siblings.length > 1) {
        for (const alt of siblings.slice(1)) line.appendChild(this.renderLine(alt, false, true));
        force = true;
      }
    }
    return line;
  }

  markAll() { for (const n of this.nodes) if (n.parent !== null) this.markMove(n.id); }

  markMove(id) {
    const el = document.querySelector(`#moves .move[data-node="${id}"]`);
    if (!el) return;
    const j = this.judgement(id);
    el.classList.remove("blunder", "mistake", "inaccuracy");
    el.querySelector(".glyph").textContent = j ? j.glyph : "";
    el.title = this.judgementTitle(id);
    if (j) el.classList.add(j.name);
    el.classList.toggle("pending", !this.results.has(id));
  }

  renderPly() {
    const id = this.current, node = this.nodes[id], r = this.results.get(id) || {};
    // The panel is drawn again: a hovered line's elements are replaced, so its preview ends.
    document.getElementById("board").classList.remove("previewing");
    this.board.setPosition(node.fen);
    const marks = {};
    if (node.uci) { marks[squareIndex(node.uci.slice(0, 2))] = "lastmove"; marks[squareIndex(node.uci.slice(2, 4))] = "lastmove"; }
    this.board.setMarks(marks);
    const title = node.parent === null ? this.page.root_label : `${this.moveLabel(node, true)}${node.san}${nagText(node.nags)}`;
    document.getElementById("ply-title").textContent = title;
    const j = this.judgement(id);
    const jEl = document.getElementById("ply-judgement");
    jEl.textContent = j ? `${j.glyph} ${j.name} (−${j.bound === "upper" ? "at least " : ""}${(100 * j.drop).toFixed(1)}% for ${whiteToMove(node) ? "Black" : "White"})` : "";
    jEl.title = node.parent === null ? "" : this.judgementTitle(id);
    jEl.className = j ? `judgement ${j.name}` : "judgement";

    // eval bar and WDL (White's view)
    const ws = this.whiteScore(id), wdl = this.whiteWdl(id);
    document.getElementById("evalbar-black").style.height = ws == null ? "50%" : `${(100 * (1 - ws)).toFixed(1)}%`;
    const evalText = this.whiteEval(id);
    document.getElementById("evalbar-label").textContent = evalText ?? "…";
    document.getElementById("evalbar").title = ws == null ? "waiting for the network" :
      `${evalText}: expected score ${(100 * ws).toFixed(1)}% for White`;
    document.getElementById("evalbar-label").classList.toggle("black-ahead", ws != null && ws < 0.5);
    const bar = document.getElementById("wdl");
    const parts = wdl || (ws == null ? [0, 1, 0] : [ws, 0, 1 - ws]);
    bar.querySelector(".w").style.width = `${100 * parts[0]}%`;
    bar.querySelector(".d").style.width = `${100 * parts[1]}%`;
    bar.querySelector(".l").style.width = `${100 * parts[2]}%`;
    const over = node.outcome, netScore = r.eval?.score;
    document.getElementById("wdl-text").textContent = over
      ? `${over.termination[0].toUpperCase()}${over.termination.slice(1)}: ${over.result === "1-0" ? "White wins" : over.result === "0-1" ? "Black wins" : "draw"}` +
        (netScore == null ? "" : ` (the network, which never sees finished games, says ${(100 * (whiteToMove(node) ? netScore : 1 - netScore)).toFixed(1)}% for White)`)
      : ws == null ? "waiting for the network…"
      : wdl ? `White wins ${fmtPct(wdl[0])} · draw ${fmtPct(wdl[1])} · Black wins ${fmtPct(wdl[2])} · expected score ${(100 * ws).toFixed(1)}% for White`
      : `expected score ${(100 * ws).toFixed(1)}% for White (no WDL head)`;
    document.getElementById("eval-big").textContent = over ? "" : evalText ?? "";

    // policy bars and arrows
    const policy = r.eval?.policy || [];
    const played = this.nodes[node.children[0]];
    const bars = document.getElementById("policy-bars");
    bars.replaceChildren();
    const top = policy.slice(0, 8);
    // Networks with an action-value head: each move's predicted win probability for the mover.
    const actionValues = r.eval?.action_values;
    bars.classList.toggle("with-action-values", !!actionValues);
    for (const [uci, p, san] of top) {
      const row = document.createElement("div");
      row.className = "bar-row" + (played && played.uci === uci ? " played" : "") + (r.search?.bestmove === uci ? " best" : "");
      row.dataset.line = uci;
      row.title = `${san}: click to play it here`;
      // Action values are stored for the side to move; shown, as every number here, for White.
      const win = actionValues && actionValues[uci] != null
        ? `<span class="bar-win" title="the network's expected score after ${san}, for White">${(100 * (whiteToMove(node) ? actionValues[uci] : 1 - actionValues[uci])).toFixed(1)}% W</span>` : "";
      row.innerHTML = `<span class="bar-label">${san}</span><span class="bar"><span style="width:${(100 * p / Math.max(top[0][1], 1e-9)).toFixed(1)}%"></span></span><span class="bar-value">${fmtPct(p)}</span>${win}`;
      bars.appendChild(row);
    }
    if (!policy.length) bars.innerHTML = `<p class="muted">${r.eval ? "no legal moves" : "waiting…"}</p>`;
    let playedText = "";
    if (played && policy.length) {
      const rank = policy.findIndex(([u]) => u === played.uci);
      playedText = rank < 0 ? `played ${played.san}: not in policy` : `played ${played.san}: #${rank + 1} of ${policy.length}, ${fmtPct(policy[rank][1])}`;
    }
    document.getElementById("played-info").textContent = playedText;
    const arrows = policy.filter(([, p]) => p >= ARROW_MIN).slice(0, MAX_ARROWS).map(([uci, p]) => ({
      from: squareIndex(uci.slice(0, 2)), to: squareIndex(uci.slice(2, 4)), width: p, colour: "#15781b", opacity: 0.35 + 0.5 * p,
    }));
    if (r.search?.bestmove) {
      const b = r.search.bestmove;
      arrows.push({ from: squareIndex(b.slice(0, 2)), to: squareIndex(b.slice(2, 4)), width: 0.25, colour: "#1d4ed8", opacity: 0.8 });
    }
    this.board.setArrows(arrows);

    // search
    const info = document.getElementById("search-info");
    const s = r.search;
    if (s) {
      const white = (v) => (whiteToMove(node) ? v : 1 - v); // stored for the side to move; shown for White
      const mate = s.mate ? `#${whiteToMove(node) ? s.mate : -s.mate}` : null;
      const score = s.score == null ? "" : ` · ${mate || fmtPawns(scoreToCentipawns(white(s.score), this.page.win_percent_slope))}` +
        ` (${(100 * white(s.score)).toFixed(1)}% for White)`;
      info.innerHTML = `<div><b>best</b> ${s.best_san || "–"}${score}</div>` +
        `<div class="pv"><b>PV</b> ${(s.pv_san || []).map((san, i) =>
          `<span class="pv-move" data-line="${s.pv.slice(0, i + 1).join(" ")}" title="click to add the line up to ${san}">${san}</span>`).join(" ") || "–"}</div>` +
        `<div class="muted">${fmtNum(s.nodes)} nodes · ${fmtNum(s.nps)} nodes/s · ${s.elapsed_s}s${s.depth ? ` · depth ${s.depth}` : ""}</div>`;
      const table = document.getElementById("root-table");
      const rows = (s.root || []).slice(0, 8);
      // Only columns some move has a value in; values are White's expected score, as everywhere.
      const columns = [
        ["visits", "visits", "search visits", (x) => String(x.visits)],
        ["q", "Q (White)", "mean value of the move's subtree: White's expected score", (x) => (100 * white(x.q)).toFixed(1) + "%"],
        ["score", "score (White)", "the move's value: White's expected score", (x) => (100 * white(x.score)).toFixed(1) + "%"],
        ["prior", "prior", "the network's policy for the move", (x) => fmtPct(x.prior)],
      ].filter(([key]) => rows.some((x) => x[key] != null));
      table.innerHTML = rows.length ? `<tr><th>move</th>${columns.map(([, head, tip]) => `<th title="${tip}">${head}</th>`).join("")}</tr>` +
        rows.map((x) => `<tr><td class="pv-move" data-line="${x.move}">${x.san}</td>` +
          columns.map(([key, , , fmt]) => `<td>${x[key] != null ? fmt(x) : ""}</td>`).join("") + "</tr>").join("") : "";
    } else {
      info.innerHTML = `<span class="muted">${this.status.status === "done" ? "no search result" : "search pending…"}</span>`;
      document.getElementById("root-table").innerHTML = "";
    }
    this.renderProgress();
    this.renderDeeper();
  }

  // ---- analyse deeper ---------------------------------------------------------------
  async startDeeper() {
    const status = document.getElementById("deeper-status"), raw = document.getElementById("deeper-budget").value;
    const budget = raw === "until-stopped" ? raw : Number(raw), node = this.current;
    status.textContent = "starting…";
    const res = await fetch(this.page.urls.deeper, { method: "POST", headers: this.postHeaders(), body: JSON.stringify({ node, budget }) });
    const body = await res.json();
    if (!res.ok) { status.textContent = body.error || `refused (${res.status})`; return; }
    this.deepRun = body.deep;
    this.deepStop = body.stop;
    this.deep.set(node, { deep: body.deep, node, status: "queued", lines: [] });
    this.renderDeeper();
  }

  async stopDeeper() {
    if (!this.deepStop) return;
    const res = await fetch(this.deepStop, { method: "POST", headers: this.postHeaders() });
    if (!res.ok) document.getElementById("deeper-status").textContent = (await res.json()).error;
  }

  postHeaders() {
    const csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    return { "Content-Type": "application/json", "X-CSRFToken": csrf };
  }

  // The deeper search's lines for the shown position, as Nibbler shows them (White's view).
  renderDeeper() {
    const box = document.getElementById("deeper");
    if (!box) return;
    const d = this.deep.get(this.current), running = d && ["queued", "running"].includes(d.status);
    document.getElementById("deeper-start").hidden = this.deepRun !== null;
    document.getElementById("deeper-stop").hidden = this.deepRun === null;
    const status = document.getElementById("deeper-status"), table = document.getElementById("deeper-lines");
    if (!d) { status.textContent = ""; table.innerHTML = ""; return; }
    const budget = d.budget === 0 ? "until stopped" : d.budget ? `budget ${d.budget}` : "";
    status.textContent = d.status === "failed" ? `failed: ${d.error}` : d.status === "queued" ? "waiting for a worker…" :
      `${running ? "searching" : d.stopped ? "stopped" : "done"}: ${fmtNum(d.nodes || 0)} nodes · ${fmtNum(d.nps || 0)} nodes/s · ${d.elapsed_s ?? 0}s` +
      (budget ? ` · ${budget}` : "");
    const lines = d.lines || [];
    const cols = [["visits", "visits", (x) => fmtNum(x.visits)], ["prior", "prior", (x) => fmtPct(x.prior)],
      ["q", "Q (White)", (x) => (100 * x.q).toFixed(1) + "%"], ["score", "score (White)", (x) => (100 * x.score).toFixed(1) + "%"],
      ["wdl", "W / D / L (White)", (x) => x.wdl.map((v) => (100 * v).toFixed(0)).join(" / ")]]
      .filter(([key]) => lines.some((x) => x[key] != null));
    table.innerHTML = lines.length ? `<tr><th>move</th>${cols.map(([, head]) => `<th>${head}</th>`).join("")}<th>line</th></tr>` +
      lines.map((x) => `<tr><td class="pv-move" data-line="${x.move}">${x.san}</td>` +
        cols.map(([key, , fmt]) => `<td>${x[key] != null ? fmt(x) : ""}</td>`).join("") +
        `<td class="pv">${x.pv_san.join(" ")}</td></tr>`).join("") : "";
  }

  renderProgress() {
    const p = this.progress.get(this.current);
    const el = document.getElementById("search-progress");
    el.textContent = p ? `searching: ${fmtNum(p.nodes)} nodes · ${fmtNum(p.nps)} nodes/s · best ${p.pv_san?.[0] || "–"} · ${p.pv_san?.join(" ") || ""}` : "";
  }

  renderStatus() {
    const st = this.status;
    const pill = document.getElementById("job-status");
    pill.textContent = st.status;
    pill.className = `pill status-${st.status}`;
    const total = st.total || this.nodes.length;
    // Counts from the results merged so far (pushed plies arrive between status messages).
    let evaluated = 0, searched = 0;
    for (const r of this.results.values()) { if (r.eval) evaluated += 1; if (r.search) searched += 1; }
    evaluated = Math.max(evaluated, st.evaluated || 0);
    searched = Math.max(searched, st.searched || 0);
    const frac = total ? (evaluated + searched) / (2 * total) : 0;
    document.getElementById("progress-bar").style.width = `${(100 * Math.min(1, frac)).toFixed(1)}%`;
    let text = `eval ${evaluated}/${total} · search ${searched}/${total}`;
    const live = [...this.progress.values()].pop();
    if (live && st.status === "running") text += ` · ${fmtNum(live.nps)} nodes/s`;
    document.getElementById("progress-text").textContent = text;
    const left = ["queued", "running"].includes(st.status) ? this.secondsLeft(searched, total) : null;
    document.getElementById("eta").textContent = left == null ? "" : left < 1 ? "almost done" : `about ${fmtDuration(left)} left`;
    const finished = ["done", "failed", "cancelled"].includes(st.status);
    document.getElementById("cancel-btn").hidden = finished || !this.page.can_cancel;
    const err = document.getElementById("error-box");
    err.hidden = !st.error;
    err.textContent = st.error ? `Analysis failed: ${st.error}` : "";
  }

  // Seconds until every position is searched: the rate of the last minute's finished searches,
  // else the site's measured cost per position (page.estimate); null when neither is known.
  secondsLeft(searched, total, now = Date.now()) {
    this.rate = this.rate || [];
    const last = this.rate[this.rate.length - 1];
    if (!last || last[1] !== searched) this.rate.push([now, searched]);
    while (this.rate.length > 2 && now - this.rate[0][0] > 60000) this.rate.shift();
    const remaining = total - searched, [t0, s0] = this.rate[0];
    if (remaining <= 0) return 0;
    if (searched > s0 && now > t0) return (remaining * (now - t0)) / 1000 / (searched - s0);
    const per = this.page.estimate?.seconds_per_position;
    return per == null ? null : remaining * per;
  }

  // ---- eval graph (plotly) -----------------------------------------------------
  scheduleGraph() {
    if (this._graphPending) return;
    this._graphPending = true;
    requestAnimationFrame(() => { this._graphPending = false; this.drawGraph(); });
  }

  // The graph library is fetched after the first ply is shown (or after a moment when none comes).
  loadPlotly() {
    if (this._plotlyRequested) return;
    this._plotlyRequested = true;
    const script = document.createElement("script");
    script.src = JSON.parse(document.getElementById("plotly-src").textContent);
    script.onload = () => this.scheduleGraph();
    document.head.appendChild(script);
  }

  drawGraph() {
    if (!window.Plotly) {
      if (this.firstPlyAt !== undefined) setTimeout(() => this.loadPlotly(), 0);
      else if (!this._plotlyTimer) this._plotlyTimer = setTimeout(() => this.loadPlotly(), 1500);
      return;
    }
    const ids = this.mainline, x = ids.map((id) => this.nodes[id].ply);
    const text = ids.map((id) => { const n = this.nodes[id]; return n.parent === null ? "start" : this.moveLabel(n, true) + n.san; });
    const traces = [];
    if (this.page.network.has_wdl) {
      const wdl = ids.map((id) => this.whiteWdl(id));
      const band = (i, name, colour) => ({ x, y: wdl.map((v) => (v ? v[i] : null)), name, stackgroup: "wdl", mode: "none",
        fillcolor: colour, hoverinfo: "skip", line: { width: 0 } });
      traces.push(band(0, "White wins", "rgba(240,240,235,0.95)"), band(1, "draw", "rgba(160,160,170,0.55)"), band(2, "Black wins", "rgba(60,60,70,0.55)"));
    }
    const line = (source, name, colour, dash) => ({ x, y: ids.map((id) => this.whiteScore(id, source)), name, mode: "lines",
      line: { color: colour, width: 2, dash }, text, customdata: ids, hovertemplate: "%{text}: %{y:.1%}<extra>" + name + "</extra>", connectgaps: false });
    traces.push(line("eval", "network", "#1f77b4", "solid"));
    if (this.page.search.name !== "policy") traces.push(line("search", this.page.search.name, "#d62728", "dot"));
    const marks = { "?!": "#e6b800", "?": "#f28c28", "??": "#d62728" };
    const judged = ids.map((id) => [id, this.judgement(id)]).filter(([, j]) => j);
    traces.push({ x: judged.map(([id]) => this.nodes[id].ply), y: judged.map(([id]) => this.whiteScore(id)),
      customdata: judged.map(([id]) => id), text: judged.map(([id, j]) => `${this.moveLabel(this.nodes[id], true)}${this.nodes[id].san}${j.glyph}`),
      mode: "markers", name: "mistakes", marker: { size: 9, color: judged.map(([, j]) => marks[j.glyph]), line: { color: "#222", width: 1 } },
      hovertemplate: "%{text}<extra></extra>" });
    const cur = this.nodes[this.current];
    const layout = {
      margin: { l: 40, r: 10, t: 6, b: 24 }, height: 190, showlegend: true, legend: { orientation: "h", y: -0.25 },
      yaxis: { range: [0, 1], tickformat: ".0%", fixedrange: true, title: { text: "White" } },
      xaxis: { range: [x[0] - 0.5, x[x.length - 1] + 0.5], fixedrange: true, title: { text: "" } },
      shapes: [{ type: "line", x0: cur.ply, x1: cur.ply, y0: 0, y1: 1, line: { color: "#444", width: 1, dash: "dot" } },
               { type: "line", x0: x[0], x1: x[x.length - 1], y0: 0.5, y1: 0.5, line: { color: "#999", width: 1 } }],
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "#fafafa", hovermode: "x",
    };
    const graph = document.getElementById("eval-graph");
    Plotly.react(graph, traces, layout, { displayModeBar: false, responsive: true });
    if (!this._graphWired) {
      this._graphWired = true;
      graph.on("plotly_click", (ev) => {
        const pt = ev.points[0];
        const id = pt.customdata !== undefined ? pt.customdata : this.mainline[x.indexOf(pt.x)];
        if (id !== undefined) this.go(id);
      });
    }
    this.graphPoints = ids.filter((id) => this.whiteScore(id, "eval") != null).length;
    this.searchPoints = ids.filter((id) => this.whiteScore(id, "search") != null).length;
    this.graphHistory.push([this.graphPoints, this.searchPoints]);
  }
}
