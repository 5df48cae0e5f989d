/**
 * The session's upkeep as the kit loads it, after start-up (session-embedded.ts,
 * session-own-site.ts): both modes' parts in one chunk with the upkeep they share (upkeep.ts). Each
 * mode's part is small; two chunks of their own would share a third (upkeep.ts), and those chunks'
 * imports and exports cost the whole runtime more than the other mode's part that a page loads
 * and never runs (docs/benchmarks.md#runtime-and-size). Nothing of it is loaded before ready.
 */
export { EmbeddedUpkeep } from './upkeep-embedded.js';
export { OwnSiteUpkeep } from './upkeep-own-site.js';
