// "Analyse this position deeper": the job's search on the shown position with a larger budget,
// its lines shown as Nibbler shows them (visits, prior, Q, WDL and each move's line), from the
// "deep" messages a worker publishes while it searches. Values are White's, as everywhere.
import { Lc0Compare } from "../compare/lc0compare.js";
import { fmtNum, fmtPct, fmtPct1 as pct1 } from "../lib/format.js";
import { postHeaders } from "../lib/requests.js";

const COLUMNS = [["visits", "visits", (x) => fmtNum(x.visits)], ["prior", "prior", (x) => fmtPct(x.prior)],
  ["q", "Q (White)", (x) => pct1(x.q)], ["score", "score (White)", (x) => pct1(x.score)],
  ["wdl", "W / D / L (White)", (x) => x.wdl.map((v) => (100 * v).toFixed(0)).join(" / ")]];

export class Deeper {
  constructor(game) {
    this.game = game;
    this.lines = new Map(); // node -> the latest "deep" message for it
    this.running = null; // the id of this page's running deeper search
    this.stopUrl = null;
    this.lc0 = new Lc0Compare(game); // "compare with lc0", in this panel for any search
    this.box = document.getElementById("deeper");
    if (!this.box) return; // a search without a budget to raise
    document.getElementById("deeper-start").addEventListener("click", () => this.start());
    document.getElementById("deeper-stop").addEventListener("click", () => this.stop());
  }

  async start() {
    const status = document.getElementById("deeper-status"), raw = document.getElementById("deeper-budget").value;
    const budget = raw === "until-stopped" ? raw : Number(raw), node = this.game.current;
    status.textContent = "starting…";
    const res = await fetch(this.game.page.urls.deeper, { method: "POST", headers: postHeaders(), body: JSON.stringify({ node, budget }) });
    const body = await res.json();
    if (!res.ok) { status.textContent = body.error || `refused (${res.status})`; return; }
    this.running = body.deep;
    this.stopUrl = body.stop;
    this.lines.set(node, { deep: body.deep, node, status: "queued", lines: [] });
    this.render();
  }

  async stop() {
    if (!this.stopUrl) return;
    const res = await fetch(this.stopUrl, { method: "POST", headers: postHeaders() });
    if (!res.ok) document.getElementById("deeper-status").textContent = (await res.json()).error;
  }

  onMessage(msg) {
    this.lines.set(msg.node, msg);
    if (msg.final && this.running === msg.deep) this.running = null;
    if (msg.node === this.game.current) this.render();
  }

  // The lines for the shown position, with the search's totals above them.
  render() {
    this.lc0.render();
    if (!this.box) return;
    const d = this.lines.get(this.game.current);
    document.getElementById("deeper-start").hidden = this.running !== null;
    document.getElementById("deeper-stop").hidden = this.running === null;
    const status = document.getElementById("deeper-status"), table = document.getElementById("deeper-lines");
    if (!d) { status.textContent = ""; table.innerHTML = ""; return; }
    status.textContent = this.statusText(d);
    const lines = d.lines || [], cols = COLUMNS.filter(([key]) => lines.some((x) => x[key] != null));
    table.innerHTML = lines.length ? `<tr><th>move</th>${cols.map(([, head]) => `<th>${head}</th>`).join("")}<th>line</th></tr>` +
      lines.map((x) => `<tr><td class="pv-move" data-line="${x.move}">${x.san}</td>` +
        cols.map(([key, , fmt]) => `<td>${x[key] != null ? fmt(x) : ""}</td>`).join("") +
        `<td class="pv">${x.pv_san.join(" ")}</td></tr>`).join("") : "";
  }

  statusText(d) {
    if (d.status === "failed") return `failed: ${d.error}`;
    if (d.status === "queued") return "waiting for a worker…";
    const running = ["queued", "running"].includes(d.status), budget = d.budget === 0 ? "until stopped" : d.budget ? `budget ${d.budget}` : "";
    return `${running ? "searching" : d.stopped ? "stopped" : "done"}: ${fmtNum(d.nodes || 0)} nodes · ${fmtNum(d.nps || 0)} nodes/s · ${d.elapsed_s ?? 0}s` +
      (budget ? ` · ${budget}` : "");
  }
}
