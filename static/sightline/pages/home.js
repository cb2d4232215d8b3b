// The home page's form (templates/analyses/home.html): the budget follows the chosen search, the
// search the chosen network, and the site's estimate of the cost ("About 3.4 s per position") all three.
import { fmtDuration } from "../lib/format.js";

// The budget field follows the chosen search (unit, range, default).
export function wireBudget(form) {
  if (!form) return;
  const search = form.querySelector("#id_search");
  const budget = form.querySelector("#id_budget");
  const unit = form.querySelector("#budget-unit");
  const apply = (resetValue) => {
    const o = search.selectedOptions[0];
    const fixed = !o.dataset.unit;
    budget.disabled = fixed;
    budget.hidden = fixed;  // no empty, disabled box: a sentence says there is nothing to choose
    const note = form.querySelector("#budget-fixed");
    if (note) note.hidden = !fixed;
    budget.min = o.dataset.min;
    budget.max = o.dataset.max;
    unit.textContent = fixed ? "" : `(${o.dataset.unit}, ${o.dataset.min}–${o.dataset.max})`;
    if (fixed) budget.value = "";
    else if (resetValue || budget.value === "") budget.value = o.dataset.default;
  };
  search.addEventListener("change", () => apply(true));
  apply(false);
}

// Home form: choosing a network chooses its family's default search (the option's data-search);
// the search's change event then resets the budget to that search's default (wireBudget).
export function wireSearchDefault(form) {
  if (!form) return;
  const network = form.querySelector("#id_network");
  const search = form.querySelector("#id_search");
  network.addEventListener("change", () => {
    const wanted = network.selectedOptions[0]?.dataset.search;
    if (!wanted || wanted === search.value) return;
    search.value = wanted;
    search.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

// Positions in the pasted game, roughly: the start plus every SAN move outside comments and tags.
export function countPositions(pgn) {
  const text = pgn.replace(/\{[^}]*\}/g, " ").replace(/\[[^\]]*\]/g, " ").replace(/;[^\n]*/g, " ");
  const moves = text.split(/\s+/).filter((t) => /^(\d+\.+)?([KQRBN]?[a-h]?[1-8]?x?[a-h][1-8](=[QRBN])?|O-O(-O)?)[+#]?[!?]*$/.test(t));
  return moves.length + 1;
}

// The form's sentence: the network's cost per position, Stockfish's beside it (the engine lane runs on
// its own thread, so the two are given apart, not added), and both for the pasted game.
export function estimateText(body, positions) {
  const net = body.seconds_per_position, engine = body.engine, game = positions === 1 ? "1 position" : `${positions} positions`;
  const parts = [net == null ? `Network: ${body.basis}` : `About ${fmtDuration(net)} per position (${body.basis})`];
  if (engine) parts.push(engine.seconds_per_position == null ? `Stockfish beside it: ${engine.basis}`
    : `Stockfish beside it, about ${fmtDuration(engine.seconds_per_position)} per position (${engine.basis})`);
  const totals = [net == null ? null : `${fmtDuration(positions * net)} for the network`,
    engine?.seconds_per_position == null ? null : `${fmtDuration(positions * engine.seconds_per_position)} for Stockfish`]
    .filter(Boolean);
  if (positions && totals.length) parts.push(`this game: ${game}, about ${totals.join(" and ")}`);
  return parts.join("; ") + ".";
}

export function wireEstimate(form) {
  const out = form?.querySelector("#estimate");
  if (!out) return;
  let timer = null, asked = 0;
  const update = async () => {
    const ask = ++asked, search = form.querySelector("#id_search").value;
    const params = new URLSearchParams({ network: form.querySelector("#id_network").value, search,
                                         budget: form.querySelector("#id_budget").value || "1",
                                         engine_nodes: form.querySelector("#id_engine_nodes")?.value ?? "" });
    const res = await fetch(`${out.dataset.url}?${params}`, { headers: { Accept: "application/json" } });
    const body = await res.json();
    if (ask !== asked) return; // a newer choice is on its way
    if (!res.ok) { out.textContent = body.error; return; }
    const fen = form.querySelector("#id_fen").value.trim(), pgn = form.querySelector("#id_pgn").value;
    out.textContent = estimateText(body, fen ? 1 : pgn.trim() ? countPositions(pgn) : 0);
  };
  const soon = () => { clearTimeout(timer); timer = setTimeout(update, 250); };
  form.addEventListener("change", soon);
  form.addEventListener("input", soon);
  update();
}
