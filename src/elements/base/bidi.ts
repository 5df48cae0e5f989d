/**
 * Keeping data (a plan name, a date, a user's name) from reordering the sentence it is put in, as
 * Closure's BidiFormatter does: a value whose direction may differ from the sentence's is wrapped
 * in FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE (U+2068 … U+2069), so the Unicode bidi
 * algorithm lays it out on its own. Any other value is left as it is, so plain text stays plain.
 */

/** Right-to-left letters and marks: Hebrew, Arabic (not its digits), Syriac, Thaana, N'Ko, …, RLM, ALM. */
const RTL_RANGES = '\\u0590-\\u065F\\u066A-\\u06EF\\u06FA-\\u08FF\\uFB1D-\\uFDFF\\uFE70-\\uFEFF\\u200F\\u061C\\u{10800}-\\u{10FFF}\\u{1E800}-\\u{1EFFF}';
const RTL = new RegExp(`[${RTL_RANGES}]`, 'u');
/**
 * What a right-to-left sentence may reorder: a letter of a left-to-right script (any letter that is
 * not a right-to-left one), or a digit. Digits keep their own order, but the neutral characters
 * between and around them do not: "1'200" (de-CH), "80 %" (de) or "2026. 12. 21." (ko) would read
 * "200'1", "% 80" and the day first. Isolated, such a value is laid out left to right as a whole.
 */
const LTR_OR_DIGIT = new RegExp(`(?![${RTL_RANGES}])\\p{L}|\\p{Nd}`, 'u');
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Embeddings, overrides (U+202A–U+202E) and isolates (U+2066–U+2069): a value's own direction controls. */
const CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * `value` with its isolates balanced: a POP DIRECTIONAL ISOLATE that closes nothing is dropped (it
 * would close the isolate around the value, from inside), and isolates left open are closed. An
 * embedding or override inside an isolate ends with it.
 */
function balanced(value: string): string {
  let open = 0;
  let out = '';
  for (const char of value) {
    if (char === '\u2069') {
      if (open === 0) continue;
      open--;
    } else if (char >= '\u2066' && char <= '\u2068') open++;
    out += char;
  }
  return out + '\u2069'.repeat(open);
}

/**
 * `value`, isolated from a sentence written right to left (`rtl`) or left to right when its
 * direction may differ: it holds letters of the other direction (or digits, in a right-to-left
 * sentence), or direction controls.
 *
 * @example
 * isolated('pro', false);     // 'pro'
 * isolated('מקצועי', false);  // '\u2068מקצועי\u2069'
 * isolated('Pro+', true);     // '\u2068Pro+\u2069'
 * isolated('80 %', true);     // '\u206880 %\u2069'
 * isolated('80 %', false);    // '80 %'
 * isolated('pro\u202E', false); // '\u2068pro\u202E\u2069' (the override ends with the isolate)
 */
export function isolated(value: string, rtl: boolean): string {
  // Printable ASCII has no right-to-left letter and no control: as it is in a left-to-right sentence.
  if (!rtl && PRINTABLE_ASCII.test(value)) return value;
  const inner = balanced(value);
  return CONTROLS.test(inner) || (rtl ? LTR_OR_DIGIT : RTL).test(inner) ? `\u2068${inner}\u2069` : inner;
}
