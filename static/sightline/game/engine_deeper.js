// "Go deeper" with Stockfish on the shown position, as lichess's local engine: a worker runs it (not
// this browser) and publishes "engine_deep" messages with its depth, nodes and 1-5 lines; each move of
// a line carries data-line, so play.js previews it on hover and plays it as a variation on a click,
// as the network's lines. Anyone viewing the job may start one (the server bounds each request).
// Values are White's, as everywhere.
import { fmtNum, fmtPct1 } from "../lib/format.js";
import { escapeHtml } from "../lib/html.js";
import { postHeaders } from "../lib/requests.js";
import { engineFigure } from "./results.js";

const $ = (id) => document.getElementById(id);

export class EngineDeeper {
  constructor(game) {
    this.game = game;
    this.byNode = new Map(); // node -> the latest "engine_deep" message for it
    this.running = null; // the id of this page's running search
    this.stopUrl = null;
    this.box = $("engine-deeper");
    if (!this.box) return;
    $("engine-deeper-start").addEventListener("click", () => this.start());
    $("engine-deeper-stop").addEventListener("click", () => this.stop());
  }

  async start() {
    const node = this.game.current, status = $("engine-deeper-status"), raw = $("engine-deeper-budget").value;
    const body = { node, lines: Number($("engine-deeper-count").value), budget: raw === "until-stopped" ? raw : Number(raw) };
    status.textContent = "starting…";
    let res, answer;
    try {
      res = await fetch(this.game.page.urls.engine_deeper, { method: "POST", headers: postHeaders(), body: JSON.stringify(body) });
      answer = await res.json();
    } catch (err) { status.textContent = "The request could not be sent (the server did not answer); try again."; return; }
    if (!res.ok) { status.textContent = answer.error || `refused (${res.status})`; return; }
    this.running = answer.deep;
    this.stopUrl = answer.stop;
    if (!this.byNode.get(node) || this.byNode.get(node).deep !== answer.deep) {
      this.byNode.set(node, { deep: answer.deep, node, status: "queued", lines: [] });
    }
    this.render();
  }

  async stop() {
    if (!this.stopUrl) return;
    const res = await fetch(this.stopUrl, { method: "POST", headers: postHeaders() });
    if (!res.ok) $("engine-deeper-status").textContent = (await res.json()).error;
  }

  onMessage(msg) {
    const known = this.byNode.get(msg.node);
    if (known && known.deep > msg.deep) return; // an older search's late message
    this.byNode.set(msg.node, msg);
    if (msg.final && this.running === msg.deep) { this.running = null; this.stopUrl = null; }
    if (msg.node === this.game.current) this.render();
  }

  // The shown position's lines, best first, with the search's totals above them.
  render() {
    if (!this.box) return;
    const d = this.byNode.get(this.game.current), node = this.game.nodes[this.game.current];
    $("engine-deeper-start").hidden = this.running !== null;
    $("engine-deeper-start").disabled = !!node.outcome;
    $("engine-deeper-stop").hidden = this.running === null;
    const status = $("engine-deeper-status"), list = $("engine-deeper-lines");
    if (!d) { status.textContent = node.outcome ? "the game is over here: nothing to search" : ""; list.innerHTML = ""; return; }
    status.textContent = this.statusText(d);
    list.innerHTML = (d.lines || []).map((line) => this.lineHtml(line)).join("");
  }

  lineHtml(line) {
    const moves = (line.pv_san || []).map((san, i) =>
      `<span class="pv-move" data-line="${line.pv.slice(0, i + 1).join(" ")}" title="click to play the line up to ${escapeHtml(san)}">${escapeHtml(san)}</span>`).join(" ");
    return `<li class="engine-line" data-rank="${line.rank}"><b class="engine-line-figure" title="${fmtPct1(line.score)} for White (win %)">` +
      `${engineFigure(line) ?? "–"}</b> <span class="muted small">d${line.depth}</span> <span class="pv">${moves}</span></li>`;
  }

  statusText(d) {
    if (d.status === "failed") return `failed: ${d.error}`;
    if (d.status === "queued") return "waiting for a worker…";
    const state = d.status === "running" ? "searching" : d.stopped ? "stopped" : "done";
    const limit = d.budget ? `${fmtNum(d.budget)} nodes` : `until stopped (at most ${d.max_seconds} s)`;
    return `${d.engine || "Stockfish"} ${state}: depth ${d.depth ?? 0}${d.seldepth ? `/${d.seldepth}` : ""} · ` +
      `${fmtNum(d.nodes || 0)} nodes · ${fmtNum(d.nps || 0)} nodes/s · ${(d.elapsed_s ?? 0).toFixed(1)} s · ${limit}`;
  }
}
