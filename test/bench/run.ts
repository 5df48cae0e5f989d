// `npm run bench`: runs every benchmark module of test/bench in one process, one after another,
// then prints the size report. Each `*.bench.ts` default-exports an async function that prints
// its own figures.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const benches = readdirSync(here).filter((name) => name.endsWith('.bench.ts')).sort();

for (const name of benches) {
  console.log(`\n## ${name.replace(/\.bench\.ts$/, '')}`);
  const module = (await import(pathToFileURL(`${here}${name}`).href)) as { default: () => Promise<void> };
  await module.default();
}

console.log('\n## size');
const size = (await import('./size.js')) as { report: () => Promise<boolean> };
process.exitCode = (await size.report()) ? 0 : 1;
