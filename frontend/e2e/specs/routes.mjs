// Routes page (routed network mode, issue 27): it lists what vmRoutes answers, row for row
// (address, node, announced), or says that no address is routed; the navigation links to it.
import assert from 'node:assert/strict';
import { seriousViolations } from '../axe.mjs';

export const tests = [
  {
    name: 'the routes page shows the API\'s vmRoutes',
    async run(ctx) {
      const api = (await ctx.gql(`{ vmRoutes(first: 1000) { virtualMachine { id } route { address node announced } } }`)).vmRoutes;
      const page = await ctx.page();
      await page.goto('/');
      await page.getByRole('link', { name: 'Routes (BGP)' }).click();
      await page.getByRole('heading', { name: 'Routes' }).waitFor();
      if (api.length === 0) {
        await page.getByText('No VM address is routed').waitFor();
      } else {
        const rows = page.getByRole('table', { name: 'VM routes' }).locator('tbody tr');
        await rows.first().waitFor();
        assert.equal(await rows.count(), api.length, 'one row per route');
        const first = await rows.first().locator('td').allTextContents();
        assert.equal(first[0], `${api[0].route.address}/32`);
        assert.equal(first[1], api[0].route.node);
      }
      await page.waitForLoadState('networkidle').catch(() => {});
      assert.deepEqual(await seriousViolations(page), [], 'serious or critical accessibility violations');
      await ctx.screenshot(page, 'routes');
      await page.context().close();
    },
  },
];
