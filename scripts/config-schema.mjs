// Part of `npm run build`: writes dist/mpkit.config.schema.json, the JSON Schema of the
// simulator's config file (mpkit.config.json), from the zod schema the simulator checks it with.
// Editors read it through the file's "$schema".
import { writeFileSync } from 'node:fs';
import { configJsonSchema } from '../dist/simulator/config.js';

writeFileSync(new URL('../dist/mpkit.config.schema.json', import.meta.url), `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
