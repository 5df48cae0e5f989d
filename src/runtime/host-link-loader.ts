/**
 * Loads the app's end of the host bridge as a chunk of its own (see host-link.ts). The script-tag
 * build, one file by definition, imports it statically (`staticChunks` in vite.config.ts).
 */
export const loadHostLink = () => import('./host-link.js');
