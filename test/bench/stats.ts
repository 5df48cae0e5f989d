// Figures shared by the benchmark series.

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Milliseconds as the series print them: `12.3 ms`. */
export const ms = (value: number): string => `${value.toFixed(1)} ms`;
