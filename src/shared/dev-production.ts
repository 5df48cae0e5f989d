/**
 * `dev.ts` of the production build: `npm run build` copies the browser entries into
 * `dist/production/` with this module in place of `dev.ts` (scripts/production-build.mjs), and the
 * script-tag build and the size report take it in place of `dev.ts` too.
 */
export const DEV: boolean = false;
