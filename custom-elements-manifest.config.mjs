// Configuration of `cem analyze` (the `cem` script): custom-elements.json, generated from the
// elements' doc comments and shipped in the package beside dist/.
import { readFileSync } from 'node:fs';
import { posix, relative, sep } from 'node:path';

/**
 * The modules under dist/elements/ that the package's exports map lets an app import (the
 * elements, their base class, the event classes, the `./elements` entry). The manifest lists only
 * these: the others (styles, helpers) are implementation. Read beside this file, not from the
 * working directory, whose package.json may be another's (test/e2e/cdn-manifest.test.ts).
 */
function exportedElementModules() {
  const { exports } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
  return new Set(Object.keys(exports).filter((key) => key.startsWith('./dist/elements/')).map((key) => key.slice(2)));
}

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

/**
 * What the analyzer cannot see by reading one file at a time, from TypeScript's type checker (the
 * analyzer's own `typescript`):
 * - `types`: each element class's own fields, with their type as tools need it. A fixed set of
 *   texts (`theme`, `state`, the gate's `access`) is spelled out as its literals
 *   (`'light' | 'dark'`), not as an alias (`Theme`) that editors cannot offer values from; other
 *   types keep the text of their declaration (`GateStrings`).
 * - `typeOnly`: per module, the exported names that are types only (`GateStrings`): no import
 *   finds them at run time.
 */
function checkElements(ts) {
  const program = ts.createProgram(['src/elements/index.ts'], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const literals = (type) => {
    const parts = type.isUnion() ? type.types : [type];
    const absent = ts.TypeFlags.Undefined | ts.TypeFlags.Null;
    if (!parts.some((part) => part.isStringLiteral()) || !parts.every((part) => part.isStringLiteral() || part.flags & absent)) return undefined;
    // The literals first, then `undefined` or `null`.
    const sorted = [...parts.filter((part) => part.isStringLiteral()), ...parts.filter((part) => !part.isStringLiteral())];
    return sorted.map((part) => (part.isStringLiteral() ? `'${part.value}'` : checker.typeToString(part))).join(' | ');
  };
  const types = new Map();
  const typeOnly = new Map();
  for (const file of program.getSourceFiles()) {
    const path = relative(process.cwd(), file.fileName).split(sep).join('/');
    if (!path.startsWith('src/elements/')) continue;
    for (const node of file.statements) {
      if (!ts.isClassDeclaration(node) || !node.name) continue;
      const fields = new Map();
      for (const member of node.members) {
        if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
        const text = literals(checker.getTypeAtLocation(member)) ?? member.type?.getText();
        if (text) fields.set(member.name.text, text);
      }
      types.set(node.name.text, fields);
    }
    const module = checker.getSymbolAtLocation(file);
    const exported = module ? checker.getExportsOfModule(module) : [];
    const value = (symbol) => !!((symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol).flags & ts.SymbolFlags.Value);
    typeOnly.set(path, new Set(exported.filter((symbol) => !value(symbol)).map((symbol) => symbol.name)));
  }
  return { types, typeOnly };
}

/**
 * Gives every field and attribute of `declaration` its checked type. A field the class declares
 * itself is its own, even where the analyzer took it for the superclass's (a `static override
 * defaultStrings` is the subclass's `GateStrings`, not the base's `BaseStrings`).
 */
function checkedTypes(declaration, types) {
  const fields = new Map();
  for (const member of declaration.members ?? []) {
    if (member.kind !== 'field') continue;
    const own = types.get(declaration.name)?.get(member.name);
    if (own && member.inheritedFrom) delete member.inheritedFrom;
    const text = own ?? types.get(member.inheritedFrom?.name)?.get(member.name);
    if (text) member.type = { text };
    fields.set(member.name, member);
  }
  for (const attribute of declaration.attributes ?? []) {
    const field = fields.get(attribute.fieldName);
    if (field?.type) attribute.type = field.type;
    if (field?.default !== undefined) attribute.default ??= field.default;
  }
}

/**
 * Only what a page can use: private and protected members (`_kit`, `_run`, `#…`) are
 * implementation, and so is Lit's `shadowRootOptions`.
 */
function publicMembers(declaration) {
  if (!Array.isArray(declaration.members)) return;
  declaration.members = declaration.members.filter(
    (member) => member.privacy !== 'private' && member.privacy !== 'protected' && !/^[_#]/.test(member.name) && member.name !== 'shadowRootOptions',
  );
}

/** The checker's findings, made once on the first file the analyzer reads. */
let checked;

export default {
  globs: ['src/elements/**/*.ts'],
  exclude: ['**/*.test.ts'],
  litelement: true,
  plugins: [
    {
      name: 'mpkit-public-dist',
      analyzePhase({ ts }) {
        checked ??= checkElements(ts);
      },
      packageLinkPhase({ customElementsManifest }) {
        const exported = exportedElementModules();
        for (const module of customElementsManifest.modules) {
          for (const declaration of module.declarations ?? []) {
            publicMembers(declaration);
            checkedTypes(declaration, checked.types);
          }
          const typeOnly = checked.typeOnly.get(module.path);
          module.exports = module.exports?.filter((entry) => !(entry.kind === 'js' && typeOnly?.has(entry.name)));
          rewriteModules(module, module.path);
          module.path = toDist(module.path, module.path);
          const element = module.declarations?.find((declaration) => declaration.tagName);
          if (element && !exported.has(module.path)) throw new Error(`<${element.tagName}>: add ./${module.path} to the exports of package.json`);
        }
        customElementsManifest.modules = customElementsManifest.modules.filter((module) => exported.has(module.path));
        checked = undefined; // `cem analyze --watch` checks the sources again on the next run
      },
    },
  ],
};
