// Head atlas page: thumbnails of each head's mean map, the label filter, and the per-layer
// counts of each label as a stacked plotly bar chart, and the table of each head's measured importance
// (the causal atlas), sortable by policy KL, |score change|, label or position.
import { colour } from "../lib/colour.js";

// One head's 64 values on an 8 x 8 canvas, a8 at the top left, the query square (d4) outlined.
function thumbnail(canvas, values, query) {
  const ctx = canvas.getContext("2d"), cell = canvas.width / 8;
  const high = Math.max(...values), low = Math.min(...values), span = high - low;
  values.forEach((v, sq) => {
    ctx.fillStyle = colour(span > 0 ? (v - low) / span : 0.5);
    ctx.fillRect((sq % 8) * cell, (7 - Math.floor(sq / 8)) * cell, cell, cell);
  });
  ctx.strokeStyle = "#e11d48";
  ctx.strokeRect((query % 8) * cell + 0.5, (7 - Math.floor(query / 8)) * cell + 0.5, cell - 1, cell - 1);
}

function chart(data) {
  const layers = Array.from({ length: data.layers }, (_, i) => i); // layers count from 0, as everywhere
  const traces = data.vocabulary.filter((label) => data.counts[label])
    .map((label) => ({ type: "bar", name: label, x: layers, y: data.counts[label] }));
  window.Plotly.newPlot("atlas-chart", traces, {
    barmode: "stack", height: 320, margin: { t: 10, r: 10, b: 40, l: 40 },
    xaxis: { title: { text: "layer" }, dtick: 1 }, yaxis: { title: { text: "heads" } },
  }, { displayModeBar: false, responsive: true });
}

// Rows of the importance table by the chosen key: the largest effect first; label and order ascending.
export function sortImportance(table, key) {
  const body = table.tBodies[0], rows = [...body.rows];
  const num = (r) => (r.dataset[key] === "" ? -Infinity : Number(r.dataset[key]));
  const text = key === "label" || key === "order";
  rows.sort((a, b) => (text ? a.dataset[key].localeCompare(b.dataset[key]) || a.dataset.order.localeCompare(b.dataset.order) : num(b) - num(a)));
  body.replaceChildren(...rows);
  table.dataset.sorted = key;
}

export function startAtlas(data) {
  const table = document.getElementById("importance-table"), sort = document.getElementById("importance-sort");
  if (table && sort) {
    sortImportance(table, sort.value);
    sort.addEventListener("change", () => sortImportance(table, sort.value));
  }
  document.querySelectorAll(".atlas-cell").forEach((cell) => {
    thumbnail(cell.querySelector("canvas"), data.thumbnails[cell.dataset.layer][cell.dataset.head], 27);
  });
  document.getElementById("atlas-filter").addEventListener("change", (e) => {
    document.querySelectorAll(".atlas-cell").forEach((cell) => {
      cell.classList.toggle("dimmed", Boolean(e.target.value) && cell.dataset.label !== e.target.value);
    });
  });
  afterFirstPaint(() => loadPlotly().then(() => chart(data), () => {
    document.getElementById("atlas-chart").textContent = "The chart's script did not load; reload the page to try again.";
  }));
}

// The grid and the table are on screen first; plotly (4.8 MB to parse) comes after, for the chart below.
function afterFirstPaint(run) {
  requestAnimationFrame(() => setTimeout(run, 0));
}

function loadPlotly() {
  if (window.Plotly) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = JSON.parse(document.getElementById("plotly-src").textContent);
    script.onload = resolve;
    script.onerror = () => reject(new Error("plotly did not load"));
    document.head.append(script);
  });
}
