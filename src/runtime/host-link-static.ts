/**
 * host-link-loader.ts for the script-tag build (vite.config.ts): the bridge is in the one file
 * anyway, and a static import spares the wrapper a bundler puts around inlined dynamic imports.
 */
import * as hostLink from './host-link.js';

export const loadHostLink = () => Promise.resolve(hostLink);
