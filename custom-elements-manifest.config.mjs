// Configuration of `cem analyze` (the `cem` script): custom-elements.json, generated from the
// elements' doc comments and shipped in the package beside dist/.
import { posix } from 'node:path';

/**
 * The analyzer reads src/ and writes what it read: `src/elements/gate/gate.ts`, a superclass as
 * `/src/…/marketplace-element.js`, a re-export as `./gate/gate.js`. The package ships dist/, so
 * every module path becomes the built file's path from the package root, the one editors,
 * Storybook and framework wrappers import: `dist/elements/gate/gate.js`.
 */
function toDist(specifier, fromModule) {
  const fromRoot = specifier.startsWith('.') ? posix.join(posix.dirname(fromModule), specifier) : specifier.replace(/^\//, '');
  return posix.normalize(fromRoot).replace(/^src\//, 'dist/').replace(/\.ts$/, '.js');
}

function rewriteModules(node, fromModule) {
  if (Array.isArray(node)) for (const item of node) rewriteModules(item, fromModule);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'module' && typeof value === 'string') node[key] = toDist(value, fromModule);
      else rewriteModules(value, fromModule);
    }
  }
}

/** Only what a page can use: private and protected members (`_kit`, `_run`, `#…`) are implementation. */
function publicMembers(declaration) {
  if (!Array.isArray(declaration.members)) return;
  declaration.members = declaration.members.filter(
    (member) => member.privacy !== 'private' && member.privacy !== 'protected' && !/^[_#]/.test(member.name),
  );
}

export default {
  globs: ['src/elements/**/*.ts'],
  exclude: ['**/*.test.ts'],
  litelement: true,
  plugins: [
    {
      name: 'mpkit-public-dist',
      packageLinkPhase({ customElementsManifest }) {
        for (const module of customElementsManifest.modules) {
          for (const declaration of module.declarations ?? []) publicMembers(declaration);
          rewriteModules(module, module.path);
          module.path = toDist(module.path, module.path);
        }
      },
    },
  ],
};
