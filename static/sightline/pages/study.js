// A study's page: its progress live over the websocket (the worker publishes after each position),
// polled instead while the socket is closed (pollJson: 202 while it runs); once the study is
// finished the page is loaded again, and the server renders the table, figures and drill-down.

import { pollJson } from "../lib/poll.js";

const root = document.getElementById("study");
const bar = document.getElementById("progress-bar");
const text = document.getElementById("progress-text");
const pill = document.getElementById("study-status");
const cancelForm = document.getElementById("cancel-form");
const FINISHED = new Set(["done", "failed", "cancelled"]);
let finished = root.dataset.finished === "1";
let socketOpen = false;

function show(state) {
  const total = state.total || 0;
  bar.style.width = `${total ? Math.round((100 * state.done) / total) : 0}%`;
  text.textContent = `${state.done} / ${total}`;
  pill.textContent = state.status;
  pill.className = `pill status-${state.status}`;
  if (FINISHED.has(state.status) && !finished) {
    finished = true;
    if (cancelForm) cancelForm.hidden = true;
    window.location.reload();
  }
}

function connect() {
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${window.location.host}${root.dataset.ws}`);
  socket.addEventListener("open", () => { socketOpen = true; });
  socket.addEventListener("message", (event) => show(JSON.parse(event.data)));
  socket.addEventListener("close", () => {
    socketOpen = false;
    if (!finished) poll();
  });
}

// The fallback: while no socket is open, the poll's progress drives the bar.
async function poll() {
  try {
    const state = await pollJson(root.dataset.state, {
      current: () => !socketOpen && !finished,
      onPending: show,
      deadlineMs: 24 * 3600 * 1000,
    });
    if (state) show(state);
  } catch (error) {
    text.textContent = `progress unavailable: ${error.message}`;
  }
}

show(JSON.parse(document.getElementById("study-state").textContent));
if (!finished) connect();
