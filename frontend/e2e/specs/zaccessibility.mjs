// Accessibility: axe-core (WCAG 2 A and AA rules) on every page of the dashboard finds no
// serious or critical violation. Runs last (z…), after the other specs made their records.
import assert from 'node:assert/strict';
import { seriousViolations } from '../axe.mjs';

async function firstID(ctx, list) {
  const r = await ctx.gql(`{ ${list}(first: 1) { edges { node { id } } } }`);
  return r[list].edges[0]?.node.id;
}

export const tests = [
  {
    name: 'axe-core: no serious or critical violations on any page',
    async run(ctx) {
      const ids = {
        datacenter: await firstID(ctx, 'datacenters'),
        floor: await firstID(ctx, 'floors'),
        rack: await firstID(ctx, 'racks'),
        host: await firstID(ctx, 'hosts'),
        network: await firstID(ctx, 'networks'),
        vm: await firstID(ctx, 'virtualMachines'),
        tenant: await firstID(ctx, 'tenants'),
      };
      const paths = [
        '/', '/datacenters', `/datacenters/${ids.datacenter}`, `/floors/${ids.floor}`, `/racks/${ids.rack}`, `/hosts/${ids.host}`,
        '/clusters', '/vms', `/vms/${ids.vm}`, '/services', '/nodes', '/tenants', `/tenants/${ids.tenant}`, '/maintainers',
        '/alerts', '/maintenance', '/tokens', '/changes', '/ipam/networks', `/ipam/networks/${ids.network}`,
        '/dcim/import', `/network?from=${ids.host}&depth=2`, '/network/routes',
        '/alerts', '/maintenance', '/events', '/rules', '/silences', '/deliveries', '/tokens', '/changes', '/ipam/networks', `/ipam/networks/${ids.network}`,
      ];
      const page = await ctx.page();
      const found = [];
      for (const p of paths) {
        await page.goto(p);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle').catch(() => {});
        for (const v of await seriousViolations(page)) found.push(`${p}: ${v}`);
      }
      await page.context().close();
      assert.deepEqual(found, [], 'serious or critical accessibility violations');
    },
  },
];
