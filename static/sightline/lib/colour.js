// The page's one colour map for attention and atlas values: perceptually ordered stops
// (viridis-like), value in [0, 1]. webapp/jobs/boardsvg.py draws the same stops server-side.
const STOPS = [[0, [68, 1, 84]], [0.25, [59, 82, 139]], [0.5, [33, 145, 140]], [0.75, [94, 201, 98]], [1, [253, 231, 37]]];

export function colour(v) {
  const t = Math.max(0, Math.min(1, v));
  for (let i = 1; i < STOPS.length; i++) {
    const [t1, c1] = STOPS[i];
    if (t <= t1) {
      const [t0, c0] = STOPS[i - 1], f = (t - t0) / (t1 - t0);
      return `rgb(${c0.map((c, k) => Math.round(c + f * (c1[k] - c))).join(",")})`;
    }
  }
  return "rgb(253,231,37)";
}

// The map as a CSS gradient, low to high, for a legend's bar.
export const colourGradient = () => `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map(colour).join(",")})`;
