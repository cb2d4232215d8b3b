// The start-a-study form: says why the chosen method does not apply to the chosen network (the
// server's sentence, from the network's stored lens description) and shows the chosen source's fields.

const form = document.getElementById("study-form");
const whyNot = JSON.parse(document.getElementById("why-not").textContent);
const network = document.getElementById("id_network");
const method = document.getElementById("id_method");
const note = document.getElementById("method-why-not");
const start = document.getElementById("start-study");

function showWhyNot() {
  const why = (whyNot[method.value] || {})[network.value] || "";
  note.textContent = why ? `${method.value} does not apply to ${network.value}: ${why}` : "";
  note.classList.toggle("error", Boolean(why));
  start.disabled = Boolean(why);
}

function showSource() {
  const kind = form.querySelector("input[name=kind]:checked")?.value || "puzzles";
  document.getElementById("source-puzzles").hidden = kind !== "puzzles";
  document.getElementById("source-text").hidden = kind === "puzzles" || kind === "games";
}

network.addEventListener("change", showWhyNot);
method.addEventListener("change", showWhyNot);
form.querySelectorAll("input[name=kind]").forEach((input) => input.addEventListener("change", showSource));
showWhyNot();
showSource();
