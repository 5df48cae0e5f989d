// `npm run docs:elements`: writes the reference half of each docs/elements/<tag>.md from
// custom-elements.json (made by `npm run cem` from the elements' doc comments). The half above the
// marker line is written by hand (what the element does, markup examples) and kept as it is; a
// page that does not exist yet gets a short one to fill in. test/node/docs-sync.test.ts renders
// the pages again and fails when a page differs, so an element's new attribute, part, event or
// custom property reaches its page.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { en } from '../src/elements/locales/en.js';

/** The line that splits a page: hand-written above, generated below. */
export const GENERATED_MARKER = '<!-- Generated from custom-elements.json by `npm run docs:elements`: edit the doc comments in src/elements, not the text below. -->';

interface Described {
  name: string;
  description?: string;
  summary?: string;
}
interface Typed extends Described {
  type?: { text: string };
  default?: string;
}
interface Attribute extends Typed {
  fieldName?: string;
  readonly?: boolean;
  inheritedFrom?: { name: string };
}
interface Member extends Typed {
  kind: string;
  static?: boolean;
  readonly?: boolean;
  privacy?: string;
  attribute?: string;
  reflects?: boolean;
  inheritedFrom?: { name: string };
}
/** One element's declaration in custom-elements.json (the fields this script reads). */
export interface ElementDeclaration {
  name: string;
  tagName: string;
  summary?: string;
  description?: string;
  attributes?: Attribute[];
  members?: Member[];
  slots?: Described[];
  cssParts?: Described[];
  cssProperties?: Typed[];
  events?: Typed[];
}
interface Manifest {
  modules: Array<{ path: string; declarations?: Array<Partial<ElementDeclaration>> }>;
}

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every element of the manifest with the module that declares it, in the manifest's order. */
export function elementsOf(manifest: Manifest): Array<{ module: string; element: ElementDeclaration }> {
  return manifest.modules.flatMap((module) =>
    (module.declarations ?? []).filter((declaration): declaration is ElementDeclaration => typeof declaration.tagName === 'string').map((element) => ({ module: module.path, element })),
  );
}

/** Text for a table cell: one line, pipes escaped. */
function cell(text: string | undefined): string {
  return (text ?? '').replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();
}

function code(text: string | undefined): string {
  return text ? `\`${cell(text).replace(/`/g, "'")}\`` : '';
}

function table(head: string[], rows: string[][]): string[] {
  if (rows.length === 0) return [];
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`), ''];
}

/**
 * The element's own built-in texts, from the English pack (src/elements/locales/en.ts), with their
 * English text: plural forms as `one: …; other: …`. Empty for a tag the pack has no section for.
 */
export function builtInTexts(tag: string): Array<[string, string]> {
  const section = (en as Record<string, Record<string, string | Record<string, string>> | undefined>)[tag];
  return Object.entries(section ?? {}).map(([key, text]) => [key, typeof text === 'string' ? text : Object.entries(text).map(([form, value]) => `${form}: ${value}`).join('; ')]);
}

/** The generated half of an element's page. */
export function referenceOf(module: string, element: ElementDeclaration): string {
  const lines: string[] = [GENERATED_MARKER, '', '## Reference', ''];
  if (element.summary) lines.push(cell(element.summary), '');
  if (element.description) lines.push(element.description.trim(), '');
  lines.push(
    `Class \`${element.name}\`, registered as \`<${element.tagName}>\` by \`import 'marketplace-app-kit/elements'\` (or \`defineElements()\`).`,
    `The class alone: \`import { ${element.name} } from 'marketplace-app-kit/${module}'\`.`,
    '',
  );
  const members = element.members ?? [];
  const fieldOf = (name: string | undefined) => members.find((member) => member.kind === 'field' && member.name === name);
  const attributes = (element.attributes ?? []).map((attribute) => {
    const field = fieldOf(attribute.fieldName);
    const description = attribute.description ?? '';
    const readOnly = (attribute.readonly || field?.readonly) && !/set by the element/i.test(description);
    const notes = [description, readOnly ? 'Read-only: set by the element.' : '', field?.reflects && !/reflect/i.test(description) ? 'Reflected.' : '']
      .filter(Boolean)
      .join(' ');
    return [code(attribute.name), code(attribute.fieldName), code(attribute.type?.text), code(attribute.default ?? field?.default), cell(notes)];
  });
  if (attributes.length) lines.push('### Attributes', '', ...table(['attribute', 'property', 'type', 'default', 'description'], attributes));
  const properties = members
    .filter((member) => member.kind === 'field' && !member.static && !member.attribute && member.privacy !== 'private')
    .map((member) => [code(member.name), code(member.type?.text), cell([member.description, member.readonly && !/set by the element/i.test(member.description ?? '') ? 'Read-only: set by the element.' : ''].filter(Boolean).join(' '))]);
  if (properties.length) lines.push('### Properties', '', 'Properties without an attribute.', '', ...table(['property', 'type', 'description'], properties));
  const statics = members
    .filter((member) => member.kind === 'field' && member.static && member.name !== 'defaultStrings')
    .map((member) => [code(`${element.name}.${member.name}`), code(member.type?.text), code(member.default), cell(member.description)]);
  if (statics.length) lines.push('### Static properties', '', ...table(['property', 'type', 'default', 'description'], statics));
  const slots = (element.slots ?? []).map((slot) => [slot.name ? code(slot.name) : '(default)', cell(slot.description)]);
  if (slots.length) lines.push('### Slots', '', ...table(['slot', 'description'], slots));
  const parts = (element.cssParts ?? []).map((part) => [code(part.name), cell(part.description)]);
  if (parts.length) lines.push('### Parts', '', `Style them with \`${element.tagName}::part(name)\`.`, '', ...table(['part', 'description'], parts));
  const properties2 = (element.cssProperties ?? []).map((property) => [code(property.name), cell(property.description)]);
  if (properties2.length) {
    lines.push('### CSS custom properties', '', 'Defaults: the shared table in [Elements](../elements.md#theming).', '', ...table(['custom property', 'description'], properties2));
  }
  const events = (element.events ?? []).map((event) => [code(event.name), code(event.type?.text), cell(event.description)]);
  if (events.length) lines.push('### Events', '', ...table(['event', 'class', 'description'], events));
  const texts = builtInTexts(element.tagName);
  if (texts.length) {
    lines.push(
      '### Texts',
      '',
      `The built-in English texts, by key; the other languages ship as packs with the same keys ([Locales](../guides/locales.md)). Override them per element with \`strings\`, or for every element with \`registerLocale\` (section \`'${element.tagName}'\`). Every element also has \`loading\`, \`error\`, \`notConnected\` and \`failed\` (section \`common\`).`,
      '',
      ...table(['key', 'built-in text'], texts.map(([key, text]) => [code(key), cell(text)])),
    );
  }
  while (lines.at(-1) === '') lines.pop();
  return `${lines.join('\n')}\n`;
}

/** A new page's hand-written half: the heading and an example to fill in. */
function starterHalf(element: ElementDeclaration): string {
  return `# \`<${element.tagName}>\`\n\n\`\`\`html\n<${element.tagName}></${element.tagName}>\n\`\`\`\n\n${cell(element.summary)}\n\n`;
}

/** The page for `element`: `existing`'s hand-written half (or a new one) and the generated half. */
export function renderElementPage(existing: string | undefined, module: string, element: ElementDeclaration): string {
  const at = existing?.indexOf(GENERATED_MARKER) ?? -1;
  const handWritten = existing === undefined ? starterHalf(element) : at < 0 ? `${existing.trimEnd()}\n\n` : existing.slice(0, at);
  return `${handWritten}${referenceOf(module, element)}`;
}

export const pagePath = (tag: string) => `${root}docs/elements/${tag}.md`;

export function readManifest(): Manifest {
  const file = `${root}custom-elements.json`;
  if (!existsSync(file)) throw new Error('custom-elements.json is missing: run `npm run cem` (or `npm run build`) first');
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  mkdirSync(`${root}docs/elements`, { recursive: true });
  for (const { module, element } of elementsOf(readManifest())) {
    const file = pagePath(element.tagName);
    const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    const page = renderElementPage(existing, module, element);
    if (page !== existing) {
      writeFileSync(file, page);
      console.log(`wrote docs/elements/${element.tagName}.md`);
    }
  }
}
