// The eval graph under the board: White's expected score along the main line (the network's, the
// search's and the reference engine's), WDL bands when the network has a WDL head, and the judged
// moves as marks (in the marks' view: the engine's or the network's); a click goes to that move.
// Where the network's value swings with the side to move, the graph says so and offers the
// network's line smoothed over two plies. Plotly is an installed package's file (webapp/site/staticfinders.py),
// loaded once the first ply is on screen: parsing it earlier held up the board.
import { ENGINE_COLOUR, moveLabel } from "../lib/format.js";

const MARKS = [["?!", "inaccuracy", "#e6b800"], ["?", "mistake", "#f28c28"], ["??", "blunder", "#d62728"]];
const PLOTLY_WAIT_MS = 1500; // when no ply comes, the library is fetched anyway after this

export class EvalGraph {
  constructor(game) {
    this.game = game;
    this.el = document.getElementById("eval-graph");
    this.points = 0; // main-line positions with a network value drawn
    this.history = []; // [network points, search points] at each redraw: the graph filling live
    this.pending = false;
    this.plotlyRequested = false;
    this.plotlyTimer = null;
    this.wired = false;
    this.smooth = false; // the network's line smoothed over two plies (offered where it swings)
    document.getElementById("graph-smooth")?.addEventListener("change", (ev) => { this.smooth = ev.target.checked; this.schedule(); });
  }

  // The words under the graph: why the engine's line is absent, and the network's swing.
  renderNotes() {
    const note = document.getElementById("engine-note"), text = this.game.engineNote();
    note.hidden = !text;
    note.textContent = text;
    const swing = this.game.review.swing, box = document.getElementById("graph-swing");
    box.hidden = !swing?.swings;
    document.getElementById("graph-swing-text").textContent = swing?.swings ? swing.message : "";
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.draw(); });
  }

  loadPlotly() {
    if (this.plotlyRequested) return;
    this.plotlyRequested = true;
    const script = document.createElement("script");
    script.src = JSON.parse(document.getElementById("plotly-src").textContent);
    script.onload = () => this.schedule();
    document.head.appendChild(script);
  }

  draw() {
    this.renderNotes();
    if (!window.Plotly) {
      if (this.game.results.firstPlyAt !== undefined) setTimeout(() => this.loadPlotly(), 0);
      else if (!this.plotlyTimer) this.plotlyTimer = setTimeout(() => this.loadPlotly(), PLOTLY_WAIT_MS);
      return;
    }
    const ids = this.game.mainline, x = ids.map((id) => this.game.nodes[id].ply);
    Plotly.react(this.el, this.traces(ids, x), this.layout(x), { displayModeBar: false, responsive: true });
    if (!this.wired) this.wireClicks();
    const results = this.game.results;
    this.points = ids.filter((id) => results.score(id, "eval") != null).length;
    this.history.push([this.points, ids.filter((id) => results.score(id, "search") != null).length]);
  }

  traces(ids, x) {
    const game = this.game, results = game.results, traces = [];
    const text = ids.map((id) => { const n = game.nodes[id]; return n.parent === null ? "start" : moveLabel(n, true) + n.san; });
    if (game.page.network.has_wdl) {
      const wdl = ids.map((id) => results.wdl(id));
      const band = (i, name, colour) => ({ x, y: wdl.map((v) => (v ? v[i] : null)), name, stackgroup: "wdl", mode: "none",
        fillcolor: colour, hoverinfo: "skip", line: { width: 0 } });
      traces.push(band(0, "White wins", "rgba(240,240,235,0.95)"), band(1, "draw", "rgba(160,160,170,0.55)"), band(2, "Black wins", "rgba(60,60,70,0.55)"));
    }
    const line = (y, name, colour, dash) => ({ x, y, name, mode: "lines",
      line: { color: colour, width: 2, dash }, text, customdata: ids, hovertemplate: "%{text}: %{y:.1%}<extra>" + name + "</extra>", connectgaps: false });
    const network = ids.map((id) => results.score(id, "eval"));
    // A family that shows its quiescence search's value (Giraffe: webapp/jobs/results.py) says so.
    const quiescent = ids.some((id) => results.get(id)?.eval?.value_source === "quiescence");
    const label = quiescent ? "network (quiescence)" : "network";
    traces.push(this.smooth ? line(smoothTwoPlies(network), `${label}, smoothed over two plies`, "#1f77b4", "solid")
      : line(network, label, "#1f77b4", "solid"));
    if (game.page.search.name !== "policy") traces.push(line(ids.map((id) => results.score(id, "search")), game.page.search.name, "#d62728", "dot"));
    if (results.hasEngine()) {
      traces.push(line(ids.map((id) => results.engineScore(id)), game.status.engine_name || "engine", ENGINE_COLOUR, "solid"));
      traces[traces.length - 1].meta = "engine";
    }
    traces.push(...markTraces(game, ids));
    return traces;
  }

  layout(x) {
    const cur = this.game.nodes[this.game.current];
    return {
      margin: { l: 40, r: 10, t: 6, b: 24 }, height: 190, showlegend: true, legend: { orientation: "h", y: -0.25 },
      yaxis: { range: [0, 1], tickformat: ".0%", fixedrange: true, title: { text: "White" } },
      xaxis: plyAxis(x),
      shapes: [{ type: "line", x0: cur.ply, x1: cur.ply, y0: 0, y1: 1, line: { color: "#444", width: 1, dash: "dot" } },
               { type: "line", x0: x[0], x1: x[x.length - 1], y0: 0.5, y1: 0.5, line: { color: "#999", width: 1 } }],
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "#fafafa", hovermode: "x",
      annotations: x.length > 1 ? [] : [{ text: "a single position: no moves to plot", showarrow: false,
        xref: "paper", yref: "paper", x: 0.5, y: 0.85, font: { color: "#666", size: 12 } }],
    };
  }

  wireClicks() {
    this.wired = true;
    this.el.on("plotly_click", (ev) => {
      const pt = ev.points[0], mainline = this.game.mainline;
      const id = pt.customdata !== undefined ? pt.customdata : mainline[mainline.map((n) => this.game.nodes[n].ply).indexOf(pt.x)];
      if (id !== undefined) this.game.go(id);
    });
  }
}

// The judged moves at White's score after them (by the values that judged them): one trace per kind ("?!" inaccuracy, "?" mistake,
// "??" blunder), so the legend names each colour drawn; lichess's words only for the engine's marks.
export function markTraces(game, ids) {
  const judged = ids.map((id) => [id, game.results.judgement(id, game.marksView)]).filter(([, j]) => j);
  return MARKS.map(([glyph, name, colour]) => {
    const mine = judged.filter(([, j]) => j.glyph === glyph);
    const network = game.marksView === "network" || (mine.length > 0 && !mine.some(([, j]) => j.source === "engine"));
    return { x: mine.map(([id]) => game.nodes[id].ply), y: mine.map(([id, j]) => markHeight(game.results, id, j)),
      customdata: mine.map(([id]) => id), text: mine.map(([id]) => `${moveLabel(game.nodes[id], true)}${game.nodes[id].san}${glyph}`),
      mode: "markers", name: network ? `${glyph} network's opinion` : `${glyph} ${name}`,
      showlegend: mine.length > 0, cliponaxis: false, // a mark at 0% or 100% (a mate) is drawn whole, not halved
      marker: { size: 9, color: colour, line: { color: "#222", width: 1 } }, hovertemplate: "%{text}<extra></extra>" };
  });
}

// Where a mark sits: on the engine's line for the engine's mark, else on the network's (or search's).
function markHeight(results, id, j) {
  return (j.source === "engine" ? results.engineScore?.(id) : null) ?? results.score(id);
}

// The network's line smoothed over two plies: each point the mean of its value and the one before
// (a value that favours the side to move swings every ply; the mean of two plies cancels the bias).
export function smoothTwoPlies(values) {
  return values.map((v, i) => (v == null ? null : i === 0 || values[i - 1] == null ? v : (v + values[i - 1]) / 2));
}

// The x axis in whole plies: ticks on plies only (a lone position's axis was 9.6 ... 10.4).
export function plyAxis(x) {
  const first = x[0], last = x[x.length - 1], span = last - first;
  return { range: [first - 0.5, last + 0.5], fixedrange: true, title: { text: "" }, tick0: first,
    dtick: Math.max(1, Math.ceil(span / 12)), tickformat: "d", showticklabels: span > 0 };
}
