// The game page's entry point (templates/analyses/job.html): the page's data in, the page running.
import { GamePage } from "../game/game.js";

export function startGamePage(page) {
  const game = new GamePage(page);
  window.__sightline = game; // for tests and benchmarks
  return game;
}
