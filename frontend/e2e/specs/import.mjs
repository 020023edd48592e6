// Bulk import in the browser: a CSV of devices with one bad row is previewed with that row named
// and nothing is written; fixed, it is applied in one go, and the export holds the new devices.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** A rack with two free units on both faces, named by its datacenter/floor/rack path. */
async function rackWithRoom(ctx) {
  const { racks } = await ctx.gql('{ racks(first: 200) { edges { node { id } } } }');
  for (const e of racks.edges) {
    const { rackElevation: v } = await ctx.gql(
      `query($id: ID!) { rackElevation(id: $id) { rack { id name height floorName datacenterName }
        devices { position height } } }`,
      { id: e.node.id },
    );
    const taken = new Set();
    for (const d of v.devices) for (let u = d.position; u < d.position + d.height; u++) taken.add(u);
    const used = [...taken][0];
    for (let u = 1; u < v.rack.height; u++) {
      if (used && !taken.has(u) && !taken.has(u + 1)) {
        return { path: `${v.rack.datacenterName}/${v.rack.floorName}/${v.rack.name}`, free: u, used };
      }
    }
  }
  throw new Error('the demo has no rack with two free units');
}

export const tests = [
  {
    name: 'import: a CSV with a bad row is refused with the row named; fixed, it applies; export has it',
    async run(ctx) {
      const rack = await rackWithRoom(ctx);
      const t = Date.now().toString(36);
      const a = `e2e-imp-a-${t}`;
      const b = `e2e-imp-b-${t}`;
      const csv = (bUnit) => `name,kind,rack,position,height,model\n${a},server,${rack.path},${rack.free},1,Imported 1U\n${b},server,${rack.path},${bUnit},1,Imported 1U\n`;
      const page = await ctx.page();
      const t0 = Date.now();
      await page.goto('/dcim/import');
      await page.getByLabel('Devices').check();
      console.log(`     import page ready ${Date.now() - t0} ms after navigation`);
      const text = page.getByLabel('CSV text');
      await text.fill(csv(rack.used)); // b on a taken unit
      const t1 = Date.now();
      await page.getByRole('button', { name: 'Preview' }).click();
      const bad = page.locator('[data-testid="import-row"][data-row="3"]');
      await bad.waitFor();
      console.log(`     preview shown in ${Date.now() - t1} ms`);
      assert.match(await bad.innerText(), /position.*overlaps/s, 'row 3 is named with its column and reason');
      assert.equal(await page.getByTestId('import-error-count').innerText(), '1');
      assert.ok(await page.getByRole('button', { name: 'Apply' }).isDisabled(), 'Apply waits for a clean preview');
      // and the API, asked to apply the same file, writes nothing
      const res = (await ctx.gql('mutation($c: String!) { importDCIM(kind: HOSTS, csv: $c, dryRun: false) { applied rows { row errors { column } } } }', { c: csv(rack.used) })).importDCIM;
      assert.equal(res.applied, false);
      assert.deepEqual(res.rows.filter((r) => r.errors.length).map((r) => [r.row, r.errors[0].column]), [[3, 'position']]);
      const none = await ctx.gql('query($a: String!, $b: String!) { hosts(where: { nameIn: [$a, $b] }) { totalCount } }', { a, b });
      assert.equal(none.hosts.totalCount, 0, 'nothing was imported');
      await ctx.screenshot(page, 'import-bad-row');

      await text.fill(csv(rack.free + 1));
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.locator('[data-testid="import-row"][data-row="3"].import-ok').waitFor();
      const t2 = Date.now();
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('Imported 2 devices.').waitFor();
      console.log(`     applied in ${Date.now() - t2} ms`);
      const made = await ctx.gql('query($a: String!, $b: String!) { hosts(where: { nameIn: [$a, $b] }, orderBy: { field: NAME }) { edges { node { name position } } } }', { a, b });
      assert.deepEqual(made.hosts.edges.map((e) => [e.node.name, e.node.position]), [[a, rack.free], [b, rack.free + 1]]);

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export devices (CSV)' }).click()]);
      const exported = readFileSync(await download.path(), 'utf8');
      assert.ok(exported.startsWith('name,kind,role,rack,position,'), 'the export has the import columns');
      assert.ok(exported.includes(`${b},SERVER,,`), 'the export holds the imported device');
      await page.context().close();
    },
  },
];
