// The game page's core: renders the stored analysis, then merges websocket updates by node id, so
// duplicates are harmless. It holds the game tree and the shown position; each part of the page
// is a module of its own: the board play (play.js), the move list (moves.js), the position panel
// (position.js), the deeper search (deeper.js) and the deeper engine (engine_deeper.js), the eval graph (graph.js), the job status
// (status.js) and the websocket (socket.js) here in game/; the attention explorer, the lens and the
// decision timeline in lens/; the game review and where the network and the engine disagree in
// compare/. The page's entry point is pages/game.js.
import { Disagreements } from "../compare/disagreements.js";
import { GameReview } from "../compare/review.js";
import { Concepts } from "../lens/concepts.js";
import { Explorer } from "../lens/explorer.js";
import { Lens } from "../lens/lens.js";
import { DecisionTimeline } from "../lens/timeline.js";
import { Board } from "../lib/board.js";
import { fetchState } from "../lib/requests.js";
import { Deeper } from "./deeper.js";
import { EngineDeeper } from "./engine_deeper.js";
import { EvalGraph } from "./graph.js";
import { MoveList, marksLegend } from "./moves.js";
import { MovePlayer } from "./play.js";
import { PositionPanel } from "./position.js";
import { Results } from "./results.js";
import { connect } from "./socket.js";
import { JobStatus, isFinished } from "./status.js";

// The side column's tabs: [button, pane] by name.
const TABS = { moves: ["tab-moves", "moves-pane"], explorer: ["explorer-open", "explorer"], lens: ["lens-open", "lens"], concepts: ["concepts-open", "concepts"], network: ["network-open", "network-panel"] };

export class GamePage {
  constructor(page) {
    this.page = page;
    this.nodes = page.nodes;
    this.results = new Results(this.nodes, page.win_percent_slope);
    this.status = page.snapshot.job;
    this.current = 0;
    this.flipped = false;
    this.marksView = "engine"; // the marks shown: "engine" (the engine's where it judged) or "network" (its own)
    this.messages = 0;
    this.findMainline();
    this.board = new Board(document.getElementById("board"));
    this.player = new MovePlayer(this);
    this.moveList = new MoveList(this);
    this.panel = new PositionPanel(this);
    this.deeper = new Deeper(this);
    this.engineDeeper = new EngineDeeper(this);
    this.graph = new EvalGraph(this);
    this.timeline = new DecisionTimeline(this);
    this.statusBar = new JobStatus(this);
    this.explorer = new Explorer(page, this);
    this.lens = new Lens(page, this);
    this.concepts = new Concepts(page, this);
    this.disagreements = new Disagreements(this);
    this.review = new GameReview(this);
    this.mergeSnapshot(page.snapshot);
    const fromHash = parseInt(location.hash.slice(1), 10);
    this.moveList.render();
    this.go(Number.isInteger(fromHash) && this.nodes[fromHash] ? fromHash : 0);
    this.renderMarksToggle();
    this.wire();
    connect(this);
    this.statusBar.render();
    this.graph.schedule();
    this.timeline.schedule();
  }

  get firstPlyAt() { return this.results.firstPlyAt; } // bench/live.py times the first ply by it

  // ---- the game tree and its results ---------------------------------------------
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
    if (added) { this.findMainline(); this.moveList.render(); this.moveList.markCurrent(this.current); }
    return added;
  }

  // The job has nodes this page has not seen (a message named one, or the count grew): fetch them.
  async fetchNodes() {
    if (this.fetchingNodes) return;
    this.fetchingNodes = true;
    try {
      const state = await fetchState(this.page.urls.state);
      if (state) { this.mergeNodes(state.nodes); this.mergeSnapshot(state); this.refreshAll(); }
    } finally { this.fetchingNodes = false; }
  }

  mergeSnapshot(snap, engineArrivals = undefined) {
    if (snap.job) this.status = snap.job;
    if (snap.job && snap.job.total > this.nodes.length) this.fetchNodes();
    for (const [id, parts] of Object.entries(snap.results || {})) this.results.merge(Number(id), parts);
    this.review.update(snap, engineArrivals);
  }

  // Why the page has no engine line (or why it stopped), in a sentence; "" while it is on.
  engineNote() {
    if (this.status.engine_note) return this.status.engine_note;
    if (!this.status.engine_nodes) return "No engine line: this analysis was started without the reference engine (its budget was 0 nodes).";
    return "";
  }

  // The marks shown on the moves, the graph and the panel: the engine's, or the network's own.
  setMarksView(view) {
    this.marksView = view;
    this.renderLegend();
    this.moveList.markAll(); this.renderPly(); this.graph.schedule();
  }

  renderLegend() {
    const legend = document.getElementById("judgement-legend");
    const networkShown = this.nodes.some((n) => {
      const j = this.results.judgement(n.id, this.marksView);
      return j && j.source !== "engine";
    });
    [legend.textContent, legend.title] = marksLegend(legend.dataset, this.marksView, this.results.hasEngine(),
      networkShown, this.page.network.name);
  }

  // The toggle appears once the engine has valued something (before, the marks are the network's).
  renderMarksToggle() {
    const engine = this.results.hasEngine(), toggle = document.getElementById("marks-toggle");
    if (toggle.hidden === !engine) return;
    toggle.hidden = !engine;
    this.setMarksView(this.marksView);
  }

  // Channel layers deliver at most once: when the job ends, fill any gap from the database.
  async reconcile() {
    const asked = this.review.arrivals;
    if (this.results.incomplete(this.status.status === "done")) {
      const state = await fetchState(this.page.urls.state);
      if (state) { this.mergeSnapshot(state, asked); this.refreshAll(); }
    } else if (this.review.stale) {  // every result is here: only the review is behind
      const review = await fetchState(this.page.urls.review);
      if (review) { this.review.update(review, asked); this.refreshAll(); }
    }
  }

  refreshAll() {
    this.moveList.render(); this.renderPly(); this.statusBar.render(); this.graph.schedule(); this.player.settle();
    this.renderMarksToggle(); this.renderLegend(); this.review.render(); this.disagreements.render();
    this.timeline.schedule();
  }

  // ---- websocket messages (socket.js dispatches them here by kind) ---------------------
  onSnapshot(msg) { this.mergeSnapshot(msg); this.refreshAll(); }

  // Evaluations, searches, judgements or engine values of some nodes: {node, eval | search |
  // judgement | network_judgement | engine} each.
  onPlies(items) {
    for (const item of items) {
      if (!this.nodes[item.node]) { this.fetchNodes(); continue; }
      this.results.merge(item.node, item);
      this.review.arrived(item);
      this.moveList.mark(item.node);
      for (const child of this.nodes[item.node].children) this.moveList.mark(child);
      if (item.node === this.current || this.nodes[this.current].parent === item.node) this.renderPly();
    }
    this.statusBar.render();
    this.graph.schedule();
    this.timeline.schedule();
    this.player.settle();
    this.renderMarksToggle();
    this.renderLegend();
  }

  onProgress(msg) {
    this.results.progress.set(msg.node, msg);
    if (msg.node === this.current) this.panel.renderProgress(this.current);
    this.statusBar.render();
  }

  onStatus(msg) {
    const note = this.engineNote();
    this.status = msg;
    if (this.engineNote() !== note) { this.review.render(); this.graph.schedule(); this.renderPly(); }
    if (msg.total > this.nodes.length) this.fetchNodes();
    this.statusBar.render();
    this.player.settle();
    if (isFinished(msg.status)) this.reconcile();
  }

  // The server lost its message queue and closes with 1013; htmx's websocket extension
  // reconnects with back-off, and the reconnect's snapshot fills what was missed.
  onLiveLost(msg) {
    document.body.classList.add("ws-down");
    document.getElementById("job-status").title = msg.message;
  }

  // ---- the shown position --------------------------------------------------------
  renderPly() { this.panel.render(this.current); }

  go(id) {
    if (this.nodes[id] === undefined) return;
    this.current = id;
    history.replaceState(null, "", "#" + id);
    this.board.select(null);
    this.moveList.markCurrent(id);
    this.renderPly();
    this.renderShare();
    this.graph.schedule();
    this.timeline.schedule();
    this.explorer.onNodeChange(id);
    this.lens.onNodeChange(id);
    this.concepts.onNodeChange(id);
  }

  showTab(name) {
    for (const [key, [button, pane]] of Object.entries(TABS)) {
      document.getElementById(button).classList.toggle("active", key === name);
      document.getElementById(button).setAttribute("aria-selected", String(key === name));
      document.getElementById(pane).hidden = key !== name;
    }
    this.explorer.setOpen(name === "explorer");
    this.lens.setOpen(name === "lens");
    this.concepts.setOpen(name === "concepts");
  }

  siblings(id) {
    const parent = this.nodes[id].parent;
    return parent === null ? [id] : this.nodes[parent].children;
  }

  lineEnd(id) {
    while (this.nodes[id].children.length) id = this.nodes[id].children[0];
    return id;
  }

  // ←/→ along the line, ↑/↓ between a move's alternatives, Home/End, f to flip.
  key(ev) {
    // A checkbox (the marks' or the graph's toggle) keeps the keys: they have no use for arrows.
    if (ev.target.closest("input:not([type=checkbox]), select, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
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
      case "End": target = this.lineEnd(this.current); break;
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
    // An edited #n in the address bar (or a link to one) moves the board; go() itself only replaces it.
    window.addEventListener("hashchange", () => {
      const id = parseInt(location.hash.slice(1), 10);
      if (Number.isInteger(id) && this.nodes[id] && id !== this.current) this.go(id);
    });
    const click = (id, fn) => document.getElementById(id).addEventListener("click", fn);
    click("nav-start", () => this.go(0));
    click("nav-prev", () => { const p = this.nodes[this.current].parent; if (p !== null) this.go(p); });
    click("nav-next", () => { const c = this.nodes[this.current].children[0]; if (c !== undefined) this.go(c); });
    click("nav-end", () => this.go(this.lineEnd(this.current)));
    click("nav-flip", () => this.flip());
    click("copy-fen", () => this.copyFen());
    document.getElementById("marks-network").addEventListener("change", (ev) => this.setMarksView(ev.target.checked ? "network" : "engine"));
    click("tab-moves", () => this.showTab("moves"));
    click("network-open", () => this.showTab("network"));
    click("lens-open", () => this.showTab("lens"));
    click("concepts-open", () => this.showTab("concepts"));
    if (this.page.network.has_attention) click("explorer-open", () => this.showTab("explorer"));
    // A copy opens at the position shown here.
    document.getElementById("fork-form")?.addEventListener("submit", () => { document.getElementById("fork-node").value = this.current; });
  }
}
