// The elements' locale packs against the English one (src/elements/locales/en.ts): the same
// sections and keys, no more and no fewer; the same placeholders in every text and each of its
// plural forms; plural forms that the language has (Intl.PluralRules), `other` among them; and
// one pack file and one loader for every built-in locale. (The type `LocalePack` makes tsc refuse
// a pack with a key missing or extra too; this reads the packs as they ship.)
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { en } from '../../src/elements/locales/en.js';
import { loaders } from '../../src/elements/locales/loaders.js';
import { BUILT_IN_LOCALES } from '../../src/elements/locales/tags.js';

type Pack = Record<string, Record<string, unknown>>;
const dir = fileURLToPath(new URL('../../src/elements/locales/', import.meta.url));

const placeholders = (text: string) => [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!))].sort();
/** A text's forms: one string, or the plural forms of an object. */
const forms = (text: unknown): [string, unknown][] => (typeof text === 'object' && text ? Object.entries(text) : [['', text]]);
const keys = (pack: Pack) => Object.entries(pack).flatMap(([section, texts]) => Object.keys(texts).map((key) => `${section}.${key}`)).sort();

async function pack(tag: string): Promise<Pack> {
  return tag === 'en' ? en : ((await (loaders as Record<string, () => Promise<{ default: unknown }>>)[tag]!()).default as Pack);
}

describe('locale packs', () => {
  it('one file and one loader for each built-in locale but English, and nothing else', () => {
    const files = readdirSync(dir).filter((file) => /^[a-z]{2,3}(-[A-Z]{2})?\.ts$/.test(file) && file !== 'en.ts');
    const packs = BUILT_IN_LOCALES.filter((tag) => tag !== 'en');
    assert.deepEqual(files.map((file) => file.slice(0, -3)).sort(), [...packs].sort());
    assert.deepEqual(Object.keys(loaders).sort(), [...packs].sort());
    for (const tag of BUILT_IN_LOCALES) assert.equal(Intl.getCanonicalLocales(tag)[0], tag, 'tags as Intl spells them');
  });

  for (const tag of BUILT_IN_LOCALES.filter((locale) => locale !== 'en')) {
    describe(tag, () => {
      it('has every key of the English pack, and no other', async () => {
        const texts = await pack(tag);
        const want = keys(en);
        const have = keys(texts);
        assert.deepEqual(
          { missing: want.filter((key) => !have.includes(key)), extra: have.filter((key) => !want.includes(key)) },
          { missing: [], extra: [] },
        );
      });

      it('uses the placeholders of the English text in every text and every plural form, and no other', async () => {
        const texts = await pack(tag);
        const wrong: string[] = [];
        for (const [section, entries] of Object.entries(en)) {
          for (const [key, english] of Object.entries(entries)) {
            const want = placeholders(forms(english).map(([, form]) => String(form)).join(' '));
            for (const [category, form] of forms(texts[section]?.[key])) {
              if (typeof form !== 'string' || form.trim() === '') wrong.push(`${section}.${key}${category ? `.${category}` : ''}: no text`);
              else if (placeholders(form).join() !== want.join()) wrong.push(`${section}.${key}${category ? `.${category}` : ''}: {${placeholders(form).join('}, {')}} instead of {${want.join('}, {')}}`);
            }
          }
        }
        assert.deepEqual(wrong, []);
      });

      it('gives plural forms its language has, `other` among them', async () => {
        const texts = await pack(tag);
        const categories: readonly string[] = new Intl.PluralRules(tag).resolvedOptions().pluralCategories;
        const wrong: string[] = [];
        for (const [section, entries] of Object.entries(texts)) {
          for (const [key, text] of Object.entries(entries)) {
            if (typeof text !== 'object' || !text) continue;
            const given = Object.keys(text);
            if (!given.includes('other')) wrong.push(`${section}.${key}: no other`);
            for (const category of given) if (!categories.includes(category)) wrong.push(`${section}.${key}: ${category} is no plural form of ${tag}`);
          }
        }
        assert.deepEqual(wrong, []);
      });

      it('is a translation: most of its texts differ from the English ones', async () => {
        const texts = await pack(tag);
        const same = keys(en).filter((key) => {
          const [section, name] = key.split('.') as [string, string];
          return JSON.stringify(texts[section]?.[name]) === JSON.stringify((en as Pack)[section]![name]);
        });
        assert.ok(same.length <= 2, `${tag} keeps the English of ${same.join(', ')}`);
      });
    });
  }

  it('names signing in the same way on the sign-in button and on the gate\'s card, in every language', async () => {
    const wrong: string[] = [];
    for (const tag of BUILT_IN_LOCALES) {
      const texts = await pack(tag);
      const button = String(texts['mp-sign-in-button']!['label']).toLocaleLowerCase(tag);
      const card = String(texts['mp-gate']!['signIn']).toLocaleLowerCase(tag);
      if (!button.includes(card)) wrong.push(`${tag}: "${button}" and "${card}"`);
    }
    assert.deepEqual(wrong, []);
  });

  it('ko: no particle right after {feature}, which may be thisFeature (이 기능), whose particle is known', async () => {
    const texts = await pack('ko');
    const particle = /\{feature\}(?:을\(를\)|를|을|이\(가\)|이|가|은\(는\)|은|는|와\(과\)|\(으\)로|으로|로)/;
    const wrong = Object.entries(texts).flatMap(([section, entries]) =>
      Object.entries(entries).flatMap(([key, text]) => (forms(text).some(([, form]) => particle.test(String(form))) ? [`${section}.${key}`] : [])),
    );
    assert.deepEqual(wrong, []);
  });
});
