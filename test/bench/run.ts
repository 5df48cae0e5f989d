// `npm run bench`: runs every benchmark module of test/bench in one process, one after another,
// then prints the size report. Each `*.bench.ts` default-exports an async function that prints
// its own figures, and resolves to false when one misses its goal: the run then exits non-zero.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const benches = readdirSync(here).filter((name) => name.endsWith('.bench.ts')).sort();

for (const name of benches) {
  console.log(`\n## ${name.replace(/\.bench\.ts$/, '')}`);
  const module = (await import(pathToFileURL(`${here}${name}`).href)) as { default: () => Promise<boolean | void> };
  if ((await module.default()) === false) process.exitCode = 1;
}

console.log('\n## size');
const size = (await import('./size.js')) as { report: () => Promise<boolean> };
if (!(await size.report())) process.exitCode = 1;
