// `npm run bench`: runs every benchmark module of test/bench in one process, one after another,
// then prints the size report and a summary of the figures. Each `*.bench.ts` default-exports an
// async function that prints its own lines and may return its figures (`Figure[]` from stats.ts:
// ours against a reference measured in the same run, with a target); those are listed again at
// the end. A series that resolves to false missed a goal it holds itself to, and so does a size
// over its budget: the run then exits non-zero. `npm run bench -- server webhooks` runs only the
// series named (and no size report).
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { verdict, type Figure } from './stats.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => only.length === 0 || only.includes(name.replace(/\.bench\.ts$/, '')))
  .sort();
if (benches.length === 0) throw new Error(`No benchmark series named ${only.join(', ')} in test/bench`);

const figures: Figure[] = [];
let passed = true;
for (const name of benches) {
  console.log(`\n## ${name.replace(/\.bench\.ts$/, '')}`);
  const module = (await import(pathToFileURL(`${here}${name}`).href)) as { default: () => Promise<Figure[] | boolean | void> };
  const outcome = await module.default();
  if (outcome === false) passed = false;
  if (Array.isArray(outcome)) figures.push(...outcome);
}

if (only.length === 0) {
  console.log('\n## size');
  const size = (await import('./size.js')) as { report: () => Promise<boolean> };
  if (!(await size.report())) passed = false;
}

if (figures.length > 0) {
  console.log('\n## ratios against references measured in this run');
  const width = Math.max(...figures.map((figure) => figure.name.length));
  for (const figure of figures) console.log(`${figure.name.padEnd(width)}  ${verdict(figure)}${figure.detail ? `  (${figure.detail})` : ''}`);
}
process.exitCode = passed ? 0 : 1;
