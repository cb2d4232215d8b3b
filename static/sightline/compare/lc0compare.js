// "Compare with lc0" in the deeper-analysis panel: lc0's own search of the shown position on the
// job's network, beside Sightline's MCTS with the same nodes (webapp/lc0compare/views.py). A
// worker computes it; the page polls while it is pending (202) or the queue is busy (429,
// lib/poll.js) and keeps each answer per position and nodes. Q values are White's, as everywhere; "overruled" says whether search chose another
// move than the raw policy's top one.
import { fmtNum, fmtPct, fmtPct1 as pct1 } from "../lib/format.js";
import { PollFailed, PollTimedOut, pollJson } from "../lib/poll.js";
import { getJsonResponse } from "../lib/requests.js";

const GIVE_UP_MS = 300_000; // the site re-queues a comparison pending longer than this

export class Lc0Compare {
  constructor(game) {
    this.game = game;
    this.results = new Map(); // "node:nodes" -> the answer, { pending: true } or { error }
    const button = document.getElementById("lc0-start");
    this.enabled = Boolean(button && !button.disabled); // disabled: the status line says why
    if (this.enabled) button.addEventListener("click", () => this.start());
  }

  key(node = this.game.current) {
    return `${node}:${document.getElementById("lc0-nodes").value}`;
  }

  async start() {
    const node = this.game.current, nodes = document.getElementById("lc0-nodes").value, key = `${node}:${nodes}`;
    const retry = this.results.get(key)?.error ? "&retry=1" : "";
    const url = `${this.game.page.urls.lc0}${node}/lc0/?nodes=${encodeURIComponent(nodes)}`;
    this.results.set(key, { pending: true });
    this.render();
    this.results.set(key, await this.answer(url, retry));
    this.render();
  }

  // The comparison once ready, or { error } with the site's sentence (lc0 unavailable, bad nodes, ...);
  // ``retry`` (asking a failed one again) goes with the first request only.
  async answer(url, retry) {
    try {
      return await pollJson((pending) => getJsonResponse(url + (pending ? "" : retry)),
        { deadlineMs: GIVE_UP_MS, tooLong: "No worker answered in time; try again." });
    } catch (e) {
      if (e instanceof PollFailed) return { error: e.body.error || `refused (${e.status})`, unavailable: e.body.lc0 === "unavailable" };
      if (e instanceof PollTimedOut) return { error: e.message };
      return { error: `The comparison could not be fetched (${e.message}).` };
    }
  }

  render() {
    if (!this.enabled) return;
    const status = document.getElementById("lc0-status"), summary = document.getElementById("lc0-summary");
    const table = document.getElementById("lc0-lines"), d = this.results.get(this.key());
    document.getElementById("lc0-compare").dataset.state = !d ? "" : d.pending ? "pending" : d.error ? "error" : "ready";
    summary.innerHTML = "";
    table.innerHTML = "";
    if (!d) { status.textContent = ""; return; }
    if (d.pending) { status.textContent = "lc0 and Sightline's MCTS are searching…"; return; }
    if (d.error) { status.textContent = d.error; return; }
    status.textContent = `${fmtNum(d.nodes)} nodes each · the visit shares differ by ${pct1(d.visit_distance)} (total variation)`;
    summary.innerHTML = [["lc0", d.lc0], ["Sightline MCTS", d.sightline]].map(([name, s]) =>
      `<div class="lc0-verdict">${name} plays <b>${s.best_san}</b> (${fmtNum(s.nodes)} nodes): ` +
      (s.overruled ? `search overruled the raw policy, whose top move is ${s.policy_san}` : "search kept the raw policy's top move") +
      "</div>").join("");
    table.innerHTML = "<tr><th>move</th><th>lc0 visits</th><th>lc0 prior</th><th>lc0 Q (White)</th>" +
      "<th>Sightline visits</th><th>Sightline prior</th><th>Sightline Q (White)</th></tr>" +
      this.rows(d).map(([san, a, b]) => `<tr><td>${san}</td>${this.cells(a)}${this.cells(b)}</tr>`).join("");
  }

  // Every move either search shows, by lc0's visits, then Sightline's.
  rows(d) {
    const moves = new Map();
    for (const [i, side] of [d.lc0, d.sightline].entries()) {
      for (const line of side.lines) {
        const row = moves.get(line.move) || [line.san, null, null];
        row[i + 1] = line;
        moves.set(line.move, row);
      }
    }
    const visits = (x) => (x ? x.visits : -1);
    return [...moves.values()].sort((x, y) => visits(y[1]) - visits(x[1]) || visits(y[2]) - visits(x[2]));
  }

  cells(line) {
    if (!line) return "<td></td><td></td><td></td>";
    return `<td>${fmtNum(line.visits)}</td><td>${line.prior == null ? "" : fmtPct(line.prior)}</td><td>${pct1(line.q)}</td>`;
  }
}
