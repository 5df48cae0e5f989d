/**
 * Fixture dates derived from the test's clock, so that no test depends on the day it runs
 * (docs/development.md, "Tests on any day"). Works in Node and in the browser.
 */

export const DAY_MS = 86_400_000;

/** `YYYY-MM-DDThh:mm:ssZ`, the marketplace's timestamp form. */
export function utcSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The timestamp `days` days after `now` (before it when negative); `now` defaults to the real clock. */
export function daysFrom(days: number, now = Date.now()): string {
  return utcSeconds(now + days * DAY_MS);
}

/**
 * Noon (UTC) of a fixed month and day, `years` years after the year of `now` (before it when
 * negative): a date whose spelled-out form ("Dec 21, 2030") a test can still write down, with
 * `year` to fill it in.
 */
export function calendarDay(years: number, month: number, day: number, now = Date.now()): { iso: string; year: number } {
  const year = new Date(now).getUTCFullYear() + years;
  return { iso: utcSeconds(Date.UTC(year, month - 1, day, 12)), year };
}
