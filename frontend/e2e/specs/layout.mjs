// Narrow windows: at 1024 px (the sidebar collapsed to its rail) the VM list is not clipped,
// no page scrolls sideways, and node names in tables and the virtual rack stay on one or two
// lines instead of wrapping a character per line.
import assert from 'node:assert/strict';

/** How far the document and the element matching selector reach past the window's right edge. */
async function overflow(page, selector) {
  return page.evaluate((sel) => {
    const vw = document.documentElement.clientWidth;
    const el = document.querySelector(sel);
    const r = el?.getBoundingClientRect();
    // an element inside a horizontally scrollable box is reachable, not clipped
    let scroller = el?.parentElement;
    while (scroller && !/(auto|scroll)/.test(getComputedStyle(scroller).overflowX)) scroller = scroller.parentElement;
    return { page: document.documentElement.scrollWidth - vw, element: r ? Math.round(r.right - vw) : null, scrolls: !!scroller };
  }, selector);
}

/** The most lines any element matching selector takes (its height over its line height). */
async function maxLines(page, selector) {
  return page.$$eval(selector, (els) =>
    Math.max(0, ...els.map((e) => {
      const lh = parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.2;
      return Math.round(e.getBoundingClientRect().height / lh);
    })),
  );
}

export const tests = [
  {
    name: 'at 1024 px the VM table is not clipped and node names do not wrap per character',
    async run(ctx) {
      const page = await ctx.page({ width: 1024, height: 768 });
      const found = [];
      await page.goto('/vms');
      await page.locator('table[aria-label="Virtual machines"] tbody tr').first().waitFor();
      const vms = await overflow(page, 'table[aria-label="Virtual machines"]');
      console.log(`     /vms at 1024 px: ${JSON.stringify(vms)}`);
      if (vms.page > 0) found.push(`/vms scrolls sideways by ${vms.page} px`);
      if (vms.element > 0 && !vms.scrolls) found.push(`/vms table clipped by ${vms.element} px`);
      await ctx.screenshot(page, 'vms-1024');

      await page.goto('/nodes');
      await page.locator('main table tbody tr').first().waitFor();
      const nodeLines = await maxLines(page, 'main table tbody tr td:first-child a');
      console.log(`     /nodes at 1024 px: node names take at most ${nodeLines} lines`);
      if (nodeLines > 2) found.push(`/nodes: a node name takes ${nodeLines} lines`);
      if ((await overflow(page, 'main table')).page > 0) found.push('/nodes scrolls sideways');

      const { clusters } = await ctx.gql('{ clusters(first: 1) { edges { node { id } } } }');
      await page.goto(`/clusters/${clusters.edges[0].node.id}`);
      await page.locator('[data-node-id]').first().waitFor();
      const rackLines = await maxLines(page, '[data-node-id] .vr-node-name, [data-node-id] h3, [data-node-id] a');
      console.log(`     /clusters/… at 1024 px: node names take at most ${rackLines} lines`);
      if (rackLines > 2) found.push(`virtual rack: a node name takes ${rackLines} lines`);
      if ((await overflow(page, 'main')).page > 0) found.push('/clusters/… scrolls sideways');
      await ctx.screenshot(page, 'cluster-1024');
      await page.context().close();
      assert.deepEqual(found, []);
    },
  },
];
