// The VM page's serial console (xterm.js over the server's console websocket, relayed by the
// demo's simulated node agent, whose guest echoes what is typed) and its usage graphs
// section (the demo runs no Prometheus: the section says so instead of drawing).
import assert from 'node:assert/strict';

async function activeVM(ctx) {
  const d = await ctx.gql(`{ virtualMachines(first: 1, where: { status: ACTIVE, hasNode: true }) { edges { node { id name } } } }`);
  const vm = d.virtualMachines.edges[0]?.node;
  assert.ok(vm, 'the demo has an ACTIVE VM on a node');
  return vm;
}

export const tests = [
  {
    name: 'console: open a VM\'s serial console, see its prompt, type and see the echo',
    async run(ctx) {
      const vm = await activeVM(ctx);
      const page = await ctx.page();
      await page.goto(`/vms/${vm.id}`);
      await page.getByRole('button', { name: 'Open console' }).click();
      const term = page.getByTestId('vm-console');
      const shows = (text, timeout) => page.waitForFunction(
        (t) => (document.querySelector('[data-testid="vm-console"]')?.textContent ?? '').includes(t), text, { timeout });
      const t0 = Date.now();
      // The demo's agents connect their console relay shortly after start: retry opening.
      for (;;) {
        try {
          await shows('login:', 5_000);
          break;
        } catch (e) {
          if (Date.now() - t0 > 60_000) {
            await ctx.screenshot(page, 'vm-console-failed');
            throw new Error(`no login prompt; console shows ${JSON.stringify(await term.textContent())}`, { cause: e });
          }
          await page.getByRole('button', { name: 'Close' }).click();
          await page.getByRole('button', { name: 'Open console' }).click();
        }
      }
      console.log(`     console prompt shown ${Date.now() - t0} ms after opening`);
      await term.click();
      const t1 = Date.now();
      await page.keyboard.type('hello-e2e');
      await shows('hello-e2e', 10_000);
      console.log(`     typed text echoed in ${Date.now() - t1} ms`);
      await ctx.screenshot(page, 'vm-console');
    },
  },
  {
    name: 'usage graphs: the VM page\'s usage section loads and offers hour, day, week and month',
    async run(ctx) {
      const vm = await activeVM(ctx);
      const page = await ctx.page();
      const t0 = Date.now();
      await page.goto(`/vms/${vm.id}`);
      const section = page.getByRole('region', { name: 'Usage graphs' });
      await section.getByRole('status').or(section.locator('figure')).first().waitFor({ timeout: 20_000 });
      console.log(`     usage section answered ${Date.now() - t0} ms after navigation`);
      for (const r of ['hour', 'day', 'week', 'month']) {
        await section.getByRole('button', { name: r }).waitFor();
      }
      const text = await section.innerText();
      // The demo has no VIRTFLOW_PROMETHEUS_URL: the server answers UNAVAILABLE and says why.
      assert.match(text, /Prometheus|CPU/, 'the section shows graphs or why there are none');
      await ctx.screenshot(page, 'vm-usage');
    },
  },

  {
    name: 'usage graphs: a node\'s page has its usage section',
    async run(ctx) {
      const d = await ctx.gql(`{ computeNodes(first: 1) { edges { node { id } } } }`);
      const node = d.computeNodes.edges[0]?.node;
      assert.ok(node, 'the demo has a compute node');
      const page = await ctx.page();
      const t0 = Date.now();
      await page.goto(`/nodes/${node.id}`);
      const section = page.getByRole('region', { name: 'Usage graphs' });
      await section.getByRole('status').or(section.locator('figure')).first().waitFor({ timeout: 20_000 });
      console.log(`     node usage section answered ${Date.now() - t0} ms after navigation`);
      assert.match(await section.innerText(), /Prometheus|CPU/);
    },
  },
];
