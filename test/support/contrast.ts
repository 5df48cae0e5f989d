// WCAG contrast of computed CSS colors, for the visual accessibility tests in the browser and
// end to end. Computed colors come as rgb() or rgba(); another form (color-mix() gives
// color(srgb …)) is refused with a clear error rather than misread.

/** Red, green, blue (0–255) and alpha (0–1). */
type Rgba = [number, number, number, number];

function parseColor(color: string): Rgba {
  const match = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(color);
  if (!match) throw new Error(`contrast: cannot read the color ${color}`);
  return [Number(match[1]), Number(match[2]), Number(match[3]), match[4] === undefined ? 1 : Number(match[4])];
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
  const [r, g, b, alpha] = parseColor(color);
  const over = (top: number, under: number) => top * alpha + under * (1 - alpha);
  const painted: Rgba = [over(r, bottom[0]), over(g, bottom[1]), over(b, bottom[2]), 1];
  const [high, low] = [luminance(painted), luminance(bottom)].sort((x, y) => y - x);
  return (high! + 0.05) / (low! + 0.05);
}
