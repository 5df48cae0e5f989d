/**
 * The time a webhook delivery was sent, read from its `timestamp` (docs/decisions.md#webhooks):
 * `YYYY-MM-DDThh:mm:ss[.f{1,9}](Z|±hh:mm)` on a day that exists. It is read digit by
 * digit, once, on every delivery: a pattern, then `Date.parse`, read it twice at three times the
 * cost. What it accepts and the time it gives are `Date.parse`'s for these forms (a test compares
 * the two on many timestamps): hours to 24:00:00 exactly, fractions cut to milliseconds.
 */

const [DOT, Z, PLUS, MINUS, COLON, T] = ['.', 'Z', '+', '-', ':', 'T'].map((character) => character.charCodeAt(0)) as [number, number, number, number, number, number];
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Milliseconds since the epoch, or NaN for anything else than the form above. */
export function deliveryTime(timestamp: string): number {
  if (timestamp.length < 20) return Number.NaN;
  const year = digits(timestamp, 0, 4);
  const month = digits(timestamp, 5, 2);
  const day = digits(timestamp, 8, 2);
  const hour = digits(timestamp, 11, 2);
  const minute = digits(timestamp, 14, 2);
  const second = digits(timestamp, 17, 2);
  const punctuated =
    timestamp.charCodeAt(4) === MINUS && timestamp.charCodeAt(7) === MINUS && timestamp.charCodeAt(10) === T && timestamp.charCodeAt(13) === COLON && timestamp.charCodeAt(16) === COLON;
  // NaN from `digits` fails every comparison below.
  if (!punctuated || !(month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && minute <= 59 && second <= 59)) return Number.NaN;

  // An optional fraction of 1 to 9 digits, of which the first three count.
  let end = 19;
  let millis = 0;
  let fractionOfMillis = false;
  if (timestamp.charCodeAt(end) === DOT) {
    let count = 0;
    for (let code = timestamp.charCodeAt(end + 1); count < 9 && code >= 48 && code <= 57; code = timestamp.charCodeAt(end + 1 + ++count)) {
      if (count < 3) millis = millis * 10 + (code - 48);
      else if (code !== 48) fractionOfMillis = true;
    }
    if (count === 0) return Number.NaN;
    if (count < 3) millis *= 10 ** (3 - count);
    end += 1 + count;
  }
  if (!(hour <= 23 || (hour === 24 && minute === 0 && second === 0 && millis === 0 && !fractionOfMillis))) return Number.NaN;

  let offsetMinutes = 0;
  const zone = timestamp.charCodeAt(end);
  if (zone === PLUS || zone === MINUS) {
    const zoneHours = digits(timestamp, end + 1, 2);
    const zoneMinutes = digits(timestamp, end + 4, 2);
    if (timestamp.length !== end + 6 || timestamp.charCodeAt(end + 3) !== COLON || !(zoneHours <= 23 && zoneMinutes <= 59)) return Number.NaN;
    offsetMinutes = (zone === PLUS ? 1 : -1) * (zoneHours * 60 + zoneMinutes);
  } else if (zone !== Z || timestamp.length !== end + 1) {
    return Number.NaN;
  }
  // Date.UTC reads years 0–99 as 1900–1999: those few go through Date.parse.
  if (year < 100) return Date.parse(timestamp);
  return Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
}

/** The number written by `count` decimal digits at `start`, or NaN if any is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const code = text.charCodeAt(i);
    if (!(code >= 48 && code <= 57)) return Number.NaN;
    value = value * 10 + (code - 48);
  }
  return value;
}

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}
