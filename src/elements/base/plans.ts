/**
 * The plans named by a `plan` attribute (`<mp-gate>`, `<mp-upgrade-button>`): one plan, or
 * several that qualify, separated by spaces or commas (`pro business`, `pro, business`).
 * Undefined when it names none, so that "no plan required" never becomes "no plan qualifies".
 *
 * @example
 * parsePlanList('pro, business'); // ['pro', 'business']
 * parsePlanList(' ');             // undefined
 */
export function parsePlanList(value: string | null | undefined): string[] | undefined {
  const plans = value?.split(/[\s,]+/).filter(Boolean);
  return plans?.length ? plans : undefined;
}
