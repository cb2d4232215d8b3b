// The position panel beside the board: the shown position's heading and judgement, eval bar and
// WDL, the reference engine's figure and line, the network's policy (bars and arrows), the search's
// best line and root moves, and the running search's progress. Every value arrives as White's (webapp/jobs/live/messages.py).
import { squareIndex } from "../lib/board.js";
import { ENGINE_COLOUR, fmtNum, fmtPawns, fmtPct, mateInLine, moveLabel, nagText, scoreToCentipawns, searchEffort, whiteToMove } from "../lib/format.js";
import { judgementTitle, markWords } from "./moves.js";
import { engineEffort, engineFigure } from "./results.js";

const MAX_ARROWS = 5, ARROW_MIN = 0.04; // as webapp/jobs/boardsvg.py
const POLICY_ROWS = 8, ROOT_ROWS = 8;
const $ = (id) => document.getElementById(id);
const pct1 = (v) => (100 * v).toFixed(1) + "%";

// Root-move table columns: only those some move has a value in; values are White's expected score.
const ROOT_COLUMNS = [
  ["visits", "visits", "search visits", (x) => String(x.visits)],
  ["q", "Q (White)", "mean value of the move's subtree: White's expected score", (x) => pct1(x.q)],
  ["score", "score (White)", "the move's value: White's expected score", (x) => pct1(x.score)],
  ["prior", "prior", "the network's policy for the move", (x) => fmtPct(x.prior)],
];

export class PositionPanel {
  constructor(game) { this.game = game; }

  render(id) {
    const node = this.game.nodes[id], r = this.game.results.get(id) || {};
    this.showPosition(node);
    this.renderHeading(id, node);
    this.renderEvalBar(id);
    this.renderWdl(id, node, r);
    this.renderEngine(node, r.engine);
    const policy = r.eval?.policy || [];
    this.renderPolicy(node, r, policy);
    this.renderArrows(policy, r.search, r.engine);
    this.renderSearch(r.search, node);
    this.renderProgress(id);
    this.game.deeper.render();
    this.game.engineDeeper.render();
  }

  // The panel is drawn again: a hovered line's elements are replaced, so its preview ends.
  showPosition(node) {
    const board = this.game.board, marks = {};
    $("board").classList.remove("previewing");
    board.setPosition(node.fen);
    if (node.uci) { marks[squareIndex(node.uci.slice(0, 2))] = "lastmove"; marks[squareIndex(node.uci.slice(2, 4))] = "lastmove"; }
    board.setMarks(marks);
  }

  // "12. Nf3?" and its judgement: the drop is the mover's loss, a size; the mover is named.
  renderHeading(id, node) {
    const game = this.game, view = game.marksView, j = game.results.judgement(id, view);
    $("ply-title").textContent = node.parent === null ? game.page.root_label : `${moveLabel(node, true)}${node.san}${nagText(node.nags)}`;
    const el = $("ply-judgement");
    const mover = whiteToMove(node) ? "Black" : "White", atLeast = j && j.bound !== "exact" ? "at least " : "";
    el.textContent = j ? `${markWords(j, game.page.network.name)} (−${atLeast}${pct1(j.drop)} for ${mover})` : "";
    el.title = node.parent === null ? "" : judgementTitle(game.results.judgementData(id, view), node, game.page.search.name, game.page.network.name);
    el.className = j ? `judgement ${j.name}` : "judgement";
  }

  // The headline value: Stockfish's where the engine lane is on (the marks are its), else the
  // network's; {ws: White's expected score, text, label, who, engine: whether it is the engine's}.
  headline(id) {
    const game = this.game, results = game.results, node = game.nodes[id], network = game.page.network.name;
    const engineOn = results.engine(id) != null || (game.status.engine_nodes > 0 && !game.engineNote());
    if (!engineOn) return { ws: results.score(id), text: results.evalText(id), label: network, who: network, engine: false };
    const name = game.status.engine_name || "Stockfish";
    return { ws: node.outcome ? results.score(id) : results.engineScore(id), text: results.engineText(id),
             label: name.split(" ")[0], who: name, engine: true };
  }

  // The eval bar and the big figure show the headline, labelled; the network's figure, labelled with
  // its name, sits beside the engine's.
  renderEvalBar(id) {
    const h = this.headline(id), over = this.game.nodes[id].outcome, network = this.game.page.network.name;
    $("evalbar-black").style.height = h.ws == null ? "50%" : `${(100 * (1 - h.ws)).toFixed(1)}%`;
    $("evalbar-label").textContent = h.text ?? "…";
    $("evalbar-source").textContent = h.label;
    $("evalbar").title = h.ws == null ? `${h.who}: waiting for its value` : `${h.who}: ${h.text}, expected score ${pct1(h.ws)} for White`;
    $("evalbar-label").classList.toggle("black-ahead", h.ws != null && h.ws < 0.5);
    $("eval-big").textContent = over ? "" : h.text ?? "…";
    $("eval-big").title = h.engine ? `${h.who}'s value, White's view: pawns, or #n for a mate` :
      "White's view: pawns from the expected score (the project's win-probability formula), #n for a mate the search proved";
    const label = $("eval-big-label");
    label.textContent = over ? "" : h.label;
    label.classList.toggle("engine", h.engine);
    $("eval-network").hidden = !h.engine || !!over;
    $("eval-network-label").textContent = network;
    $("eval-network-figure").textContent = this.game.results.evalText(id) ?? "…";
  }

  // The WDL bar and its words; a finished game says its result (and what the network thought).
  renderWdl(id, node, r) {
    const ws = this.game.results.score(id), wdl = this.game.results.wdl(id), over = node.outcome, net = r.eval?.score;
    const parts = wdl || (ws == null ? [0, 1, 0] : [ws, 0, 1 - ws]);
    ["w", "d", "l"].forEach((cls, i) => { $("wdl").querySelector(`.${cls}`).style.width = `${100 * parts[i]}%`; });
    $("wdl-text").textContent = over
      ? `${over.termination[0].toUpperCase()}${over.termination.slice(1)}: ${over.result === "1-0" ? "White wins" : over.result === "0-1" ? "Black wins" : "draw"}` +
        (net == null ? "" : ` (the network, which never sees finished games, says ${pct1(net)} for White)`)
      : ws == null ? "waiting for the network…"
      : wdl ? `${this.game.page.network.name}: White wins ${fmtPct(wdl[0])} · draw ${fmtPct(wdl[1])} · Black wins ${fmtPct(wdl[2])} · expected score ${pct1(ws)} for White`
      : `${this.game.page.network.name}: expected score ${pct1(ws)} for White (no WDL head)`;
    if (!over && r.eval?.static_score != null) {
      $("wdl-text").textContent += ` · the network's value is its quiescence search's (${pct1(r.eval.score)}); its static evaluation says ${pct1(r.eval.static_score)}`;
    }
  }

  // The reference engine beside the network: its figure (pawns or a mate), White's win % (lichess's
  // curve), its best move and its line (a click adds the line up to that move, as the search's PV).
  renderEngine(node, e) {
    const box = $("engine-info");
    if (!box) return;
    const note = this.game.engineNote();
    box.hidden = !e && !note;
    if (!e) { box.innerHTML = note ? `<span class="muted">${note}</span>` : ""; return; }
    const figure = engineFigure(e, node.outcome), name = this.game.status.engine_name || "the engine";
    const mate = e.mate ? ` (${e.mate > 0 ? "White" : "Black"} mates in ${Math.abs(e.mate)})` : "";
    const line = (e.pv_san || []).map((san, i) =>
      `<span class="pv-move" data-line="${e.pv.slice(0, i + 1).join(" ")}" title="click to add the line up to ${san}">${san}</span>`).join(" ");
    box.innerHTML = `<div><span class="engine-key"></span><b class="engine-name">${name}</b> ` +
      `<span id="engine-figure" class="engine-figure">${figure ?? "–"}</span>${mate} · ` +
      `<span id="engine-win">${pct1(e.win / 100)}</span> for White <span class="muted small">(win %)</span>` +
      (node.outcome ? "" : ` · best <span id="engine-best">${e.best_san || e.best || "–"}</span>`) + "</div>" +
      (line ? `<div class="pv engine-pv"><b>line</b> ${line}</div>` : "") +
      `<div class="muted small">${engineEffort(e, node.outcome)}</div>`;
  }

  // The likeliest moves as bars (a click plays one); with an action-value head, each move's
  // expected score for White beside its bar.
  renderPolicy(node, r, policy) {
    const played = this.game.nodes[node.children[0]], bars = $("policy-bars"), top = policy.slice(0, POLICY_ROWS);
    const actionValues = r.eval?.action_values;
    bars.replaceChildren();
    bars.classList.toggle("with-action-values", !!actionValues);
    for (const [uci, p, san] of top) {
      const row = document.createElement("div");
      row.className = "bar-row" + (played && played.uci === uci ? " played" : "") + (r.search?.bestmove === uci ? " best" : "");
      row.dataset.line = uci;
      row.title = `${san}: click to play it here`;
      const win = actionValues && actionValues[uci] != null
        ? `<span class="bar-win" title="the network's expected score after ${san}, for White">${pct1(actionValues[uci])} W</span>` : "";
      row.innerHTML = `<span class="bar-label">${san}</span><span class="bar"><span style="width:${(100 * p / Math.max(top[0][1], 1e-9)).toFixed(1)}%"></span></span><span class="bar-value">${fmtPct(p)}</span>${win}`;
      bars.appendChild(row);
    }
    if (!policy.length) bars.innerHTML = `<p class="muted">${r.eval ? "no legal moves" : "waiting…"}</p>`;
    $("played-info").textContent = this.playedText(played, policy);
  }

  playedText(played, policy) {
    if (!played || !policy.length) return "";
    const rank = policy.findIndex(([u]) => u === played.uci);
    return rank < 0 ? `played ${played.san}: not in policy` : `played ${played.san}: #${rank + 1} of ${policy.length}, ${fmtPct(policy[rank][1])}`;
  }

  // Green arrows for the likeliest moves, a blue one for the search's best move, a purple one for
  // the reference engine's.
  renderArrows(policy, search, engine) {
    const arrows = policy.filter(([, p]) => p >= ARROW_MIN).slice(0, MAX_ARROWS).map(([uci, p]) => ({
      from: squareIndex(uci.slice(0, 2)), to: squareIndex(uci.slice(2, 4)), width: p, colour: "#15781b", opacity: 0.35 + 0.5 * p,
    }));
    if (search?.bestmove) {
      const b = search.bestmove;
      arrows.push({ from: squareIndex(b.slice(0, 2)), to: squareIndex(b.slice(2, 4)), width: 0.25, colour: "#1d4ed8", opacity: 0.8 });
    }
    if (engine?.best) {
      const b = engine.best;
      arrows.push({ from: squareIndex(b.slice(0, 2)), to: squareIndex(b.slice(2, 4)), width: 0.2, colour: ENGINE_COLOUR, opacity: 0.8, kind: "engine" });
    }
    this.game.board.setArrows(arrows);
  }

  renderSearch(s, node) {
    if (node.outcome) {  // the rules decide here; a search has nothing to add
      $("search-info").innerHTML = `<span class="muted">${node.outcome.termination}: no move to search</span>`;
      $("root-table").innerHTML = "";
      return;
    }
    if (!s) {
      $("search-info").innerHTML = `<span class="muted">${this.game.status.status === "done" ? "no search result" : "search pending…"}</span>`;
      $("root-table").innerHTML = "";
      return;
    }
    const slope = this.game.page.win_percent_slope, mate = mateInLine(s, whiteToMove(node));
    const score = mate ? ` · #${mate} (${mate > 0 ? "White" : "Black"} mates in ${Math.abs(mate)})`
      : s.score == null ? "" : ` · ${fmtPawns(scoreToCentipawns(s.score, slope))} (${pct1(s.score)} for White)`;
    $("search-info").innerHTML = `<div><b>best</b> ${s.best_san || "–"}${score}</div>` +
      `<div class="pv"><b>PV</b> ${(s.pv_san || []).map((san, i) =>
        `<span class="pv-move" data-line="${s.pv.slice(0, i + 1).join(" ")}" title="click to add the line up to ${san}">${san}</span>`).join(" ") || "–"}</div>` +
      `<div class="muted">${searchEffort(s)}</div>`;
    this.renderRootTable(s.root || []);
  }

  renderRootTable(root) {
    const rows = root.slice(0, ROOT_ROWS), columns = ROOT_COLUMNS.filter(([key]) => rows.some((x) => x[key] != null));
    $("root-table").innerHTML = rows.length ? `<tr><th>move</th>${columns.map(([, head, tip]) => `<th title="${tip}">${head}</th>`).join("")}</tr>` +
      rows.map((x) => `<tr><td class="pv-move" data-line="${x.move}">${x.san}</td>` +
        columns.map(([key, , , fmt]) => `<td>${x[key] != null ? fmt(x) : ""}</td>`).join("") + "</tr>").join("") : "";
  }

  renderProgress(id) {
    const p = this.game.results.progress.get(id);
    $("search-progress").textContent = p ? `searching: ${fmtNum(p.nodes)} nodes${p.nps ? ` · ${fmtNum(p.nps)} nodes/s` : ""}` +
      ` · best ${p.pv_san?.[0] || "–"} · ${p.pv_san?.join(" ") || ""}` : "";
  }
}
