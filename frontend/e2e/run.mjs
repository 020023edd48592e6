// Runs every spec in e2e/specs (alphabetically) against one demo server in headless Chromium.
// Each spec exports `tests`: an array of { name, run(ctx) }. Exits 1 when any test fails.
// `npm run e2e -- rack` runs only the tests whose file or name contains "rack";
// `npm run e2e -- rack traffic` those that contain either.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { start, artifacts } from './harness.mjs';

const filters = process.argv.slice(2);
const dir = join(import.meta.dirname, 'specs');
const files = readdirSync(dir).filter((f) => f.endsWith('.mjs')).sort();
const { ctx, stop } = await start();
let failed = 0;
let ran = 0;
try {
  for (const f of files) {
    const { tests } = await import(pathToFileURL(join(dir, f)).href);
    for (const t of tests) {
      if (filters.length && !filters.some((w) => f.includes(w) || t.name.includes(w))) continue;
      ran++;
      const t0 = Date.now();
      try {
        await t.run(ctx);
        console.log(`ok   ${f} › ${t.name} (${Date.now() - t0} ms)`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${f} › ${t.name} (${Date.now() - t0} ms)\n     ${e?.stack ?? e}`);
      }
    }
  }
} finally {
  await stop();
}
console.log(`\n${ran - failed} of ${ran} end-to-end tests passed; screenshots in ${artifacts}`);
if (ran === 0) {
  console.log('no test matched');
  process.exit(1);
}
process.exit(failed ? 1 : 0);
