// WCAG contrast of computed CSS colors, for the visual accessibility tests in the browser and
// end to end. Computed colors come as rgb(), rgba() or, from color-mix(), color(srgb …).

/** Red, green, blue (0–255) and alpha (0–1). */
export type Rgba = [number, number, number, number];

export function parseColor(color: string): Rgba {
  let match = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(color);
  if (match) return [Number(match[1]), Number(match[2]), Number(match[3]), match[4] === undefined ? 1 : Number(match[4])];
  match = /^color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.]+))?\)$/.exec(color);
  if (match) return [Number(match[1]) * 255, Number(match[2]) * 255, Number(match[3]) * 255, match[4] === undefined ? 1 : Number(match[4])];
  throw new Error(`contrast: cannot read the color ${color}`);
}

function luminance([r, g, b]: Rgba): number {
  const linear = (channel: number) => {
    const c = channel / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The contrast ratio of `color` (translucent or not) painted over the opaque `background`. */
export function contrast(color: string, background: string): number {
  const bottom = parseColor(background);
  if (bottom[3] !== 1) throw new Error(`contrast: the background ${background} is not opaque`);
  const top = parseColor(color);
  const alpha = top[3];
  const painted: Rgba = [0, 1, 2].map((i) => top[i]! * alpha + bottom[i]! * (1 - alpha)) as unknown as Rgba;
  painted[3] = 1;
  const [high, low] = [luminance(painted), luminance(bottom)].sort((a, b) => b - a);
  return (high! + 0.05) / (low! + 0.05);
}
