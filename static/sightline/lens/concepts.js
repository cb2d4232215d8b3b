// The Concepts panel (issue 39): what the network's linear concept probes read on the shown position.
// A what-where strip (concepts x readout points, each cell the probe's probability, or a regression's
// prediction scaled over its row) and, for a square concept, its per-square map at the chosen point.
// The probes are the network's concept atlas (/networks/<name>/concepts/); the scores come from the
// API (/api/networks/<name>/concepts/position/?fen=), computed by a worker: 202 while pending, polled.
// Without a ready atlas the panel says so and offers to compute it. Points count from 0.

import { escapeHtml } from "../lib/html.js";
import { PollFailed, pollJson } from "../lib/poll.js";
import { postHeaders } from "../lib/requests.js";

const $ = (id) => document.getElementById(id);
const FILES = "abcdefgh";

// White (0) to a deep blue (1): a probability's cell.
function shade(t) {
  const v = Math.max(0, Math.min(1, t));
  return `rgb(${Math.round(255 - 215 * v)},${Math.round(255 - 160 * v)},255)`;
}

export class Concepts {
  constructor(page, game) {
    this.page = page;
    this.game = game;
    this.open = false;
    this.serial = 0;
    this.answer = null;
    this.chosen = null; // [concept, point] of the square map shown
    this.base = `/api/networks/${encodeURIComponent(page.network.name)}/concepts/`;
    $("concepts-compute").addEventListener("click", () => this.compute());
  }

  setOpen(open) {
    this.open = open;
    if (open) this.load();
  }

  onNodeChange() { if (this.open) this.load(); }

  say(text) { $("concepts-status").textContent = text; }

  async load() {
    const serial = ++this.serial, fen = this.game.nodes[this.game.current].fen;
    $("concepts-missing").hidden = true;
    this.say("asking the network's concept probes…");
    try {
      const answer = await pollJson(`${this.base}position/?fen=${encodeURIComponent(fen)}`, {
        current: () => serial === this.serial, onPending: () => this.say("a worker reads the position…") });
      if (answer === null) return;
      this.answer = answer;
      this.say("");
      this.render();
    } catch (err) {
      if (serial !== this.serial) return;
      $("concepts-strip").innerHTML = ""; $("concepts-map").innerHTML = "";
      if (err instanceof PollFailed && err.status === 409) {
        $("concepts-missing").hidden = false;
        this.say(err.body.atlas === "queued" || err.body.atlas === "running"
          ? "The concept atlas is being computed in the background; come back when it is ready." : err.message);
      } else this.say(err.message);
    }
  }

  async compute() {
    const res = await fetch(this.base, { method: "POST", headers: postHeaders() });
    const body = await res.json().catch(() => ({}));
    this.say(res.status === 202 || res.ok ? "The concept atlas is queued: a background job of some minutes." : body.error || `error ${res.status}`);
  }

  render() {
    const { points, concepts } = this.answer;
    const head = points.map((p, k) => `<th title="${escapeHtml(p)}">${k}</th>`).join("");
    const rows = concepts.map((c) => {
      const values = c.strip.filter((v) => v !== null);
      const lo = Math.min(...values), hi = Math.max(...values);
      const cells = c.strip.map((v, k) => {
        if (v === null) return `<td class="muted">·</td>`;
        const t = c.kind === "regression" ? (hi > lo ? (v - lo) / (hi - lo) : 0.5) : v;
        const best = points[k] === c.best_point ? " best" : "";
        return `<td class="concept-cell${best}" data-concept="${escapeHtml(c.name)}" data-point="${k}" style="background:${shade(t)}" title="${escapeHtml(c.name)} at ${escapeHtml(points[k])}: ${v.toFixed(3)}">${c.kind === "regression" ? v.toFixed(1) : ""}</td>`;
      }).join("");
      const label = c.kind === "square" ? "" : c.label === null ? "–" : Number(c.label).toFixed(c.kind === "binary" ? 0 : 1);
      return `<tr data-concept="${escapeHtml(c.name)}" title="${escapeHtml(c.about)}"><th>${escapeHtml(c.name)}</th>${cells}<td class="small">${label}</td></tr>`;
    }).join("");
    $("concepts-strip").innerHTML = `<table class="concepts-strip"><thead><tr><th></th>${head}<th>true</th></tr></thead><tbody>${rows}</tbody></table>`;
    for (const cell of $("concepts-strip").querySelectorAll("td.concept-cell")) {
      cell.addEventListener("click", () => { this.chosen = [cell.dataset.concept, Number(cell.dataset.point)]; this.renderMap(); });
    }
    const square = concepts.find((c) => c.kind === "square" && c.best_point);
    if (!this.chosen || !concepts.some((c) => c.name === this.chosen[0] && c.kind === "square")) {
      this.chosen = square ? [square.name, points.indexOf(square.best_point)] : null;
    }
    this.renderMap();
  }

  // A square concept's probabilities at one point, White at the bottom; a ring marks the true squares.
  renderMap() {
    const box = $("concepts-map");
    const c = this.chosen && this.answer.concepts.find((x) => x.name === this.chosen[0]);
    if (!c || c.kind !== "square" || !c.squares[this.chosen[1]]) { box.innerHTML = ""; return; }
    const map = c.squares[this.chosen[1]];
    let cells = "";
    for (let rank = 7; rank >= 0; rank--) {
      for (let file = 0; file < 8; file++) {
        const sq = rank * 8 + file, p = map[sq], truth = c.label[sq];
        cells += `<div class="concept-square${truth === 1 ? " truth" : ""}" title="${FILES[file]}${rank + 1}: ${p === null ? "not a candidate" : p.toFixed(3)}" style="background:${p === null ? "#eee" : shade(p)}"></div>`;
      }
    }
    box.innerHTML = `<p class="small">${escapeHtml(c.name)} at ${escapeHtml(this.answer.points[this.chosen[1]])} (point ${this.chosen[1]}): the probe's probability per square; ringed: true</p><div class="concept-board">${cells}</div>`;
  }
}
