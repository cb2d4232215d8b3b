// Where the network and the reference engine disagree: the game's positions by the gap between
// the network's expected score and the engine's (webapp/jobs/review.py sorts them so), or with
// the positions where the network's likeliest move is not the engine's best first. Each is a link
// to the position (#n: the panel shows both), and a button opens the attention explorer there.
import { fmtPct1 as pct1, moveLabel } from "../lib/format.js";
import { escapeHtml } from "../lib/html.js";

const SHOWN = 12;

// The list in the order asked: "gap" (the server's: largest gap first) or "move" (positions where
// the policy's top move differs from the engine's best first, each part by gap).
export function sortDisagreements(items, by) {
  const byGap = (a, b) => b.gap - a.gap || a.node - b.node;
  if (by !== "move") return [...items].sort(byGap);
  return [...items].sort((a, b) => Number(a.same_move) - Number(b.same_move) || byGap(a, b));
}

export class Disagreements {
  constructor(game) {
    this.game = game;
    this.items = [];
    this.box = document.getElementById("disagreements");
    this.sort = document.getElementById("disagreements-sort");
    this.sort.addEventListener("change", () => this.render());
    this.box.addEventListener("click", (ev) => {
      const explore = ev.target.closest("[data-explore]");
      if (!explore) return;
      ev.preventDefault();
      game.go(Number(explore.dataset.explore));
      game.showTab("explorer");
    });
  }

  update(items) { this.items = items; this.render(); }

  render() {
    const game = this.game, card = document.getElementById("disagreements-card");
    card.hidden = !this.items.length;
    const attention = game.page.network.has_attention, name = game.status.engine_name || "the engine";
    this.box.innerHTML = sortDisagreements(this.items, this.sort.value).slice(0, SHOWN).map((d) => {
      const node = game.nodes[d.node];
      if (!node) return "";
      const where = node.parent === null ? "the start" : `after ${moveLabel(node, true)}${node.san}`;
      const moves = d.policy_top_san || d.engine_best_san
        ? ` · <span class="${d.same_move ? "" : "differs"}">policy ${escapeHtml(d.policy_top_san || "–")}, ${escapeHtml(name)} ${escapeHtml(d.engine_best_san || d.engine_best || "–")}</span>` : "";
      return `<li data-node="${d.node}"><a href="#${d.node}" class="disagreement-link">${escapeHtml(where)}</a>` +
        `${d.main ? "" : ' <span class="muted small">(variation)</span>'}: network ${pct1(d.network_score)}, ` +
        `${escapeHtml(name)} ${pct1(d.engine_score)} for White <span class="muted">(gap ${pct1(d.gap)})</span>${moves}` +
        (attention ? ` <button type="button" class="small" data-explore="${d.node}" title="open the attention explorer at this position">attention</button>` : "") +
        "</li>";
    }).join("");
    document.getElementById("disagreements-more").textContent =
      this.items.length > SHOWN ? `the ${SHOWN} largest of ${this.items.length} positions` : "";
  }
}
