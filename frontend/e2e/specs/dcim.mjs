// DCIM editing, change log and IPAM in the browser against the demo server: mount a device by
// clicking free units of a rack elevation, add a port and cable it to a switch (the path trace
// follows), a refused delete lists the dependents, each change is in the change log with its
// diff, and an address is allocated and released.
import assert from 'node:assert/strict';

/** A 42U rack of the demo with two free units on both faces, and its rack leaf switch. */
async function pickRack(ctx) {
  const { racks } = await ctx.gql('{ racks(first: 200) { edges { node { id name height } } } }');
  for (const e of racks.edges) {
    const { rackElevation: v } = await ctx.gql(
      `query($id: ID!) { rackElevation(id: $id) { rack { id name height } freeUnits
        devices { id name role kind position height face fullDepth } } }`,
      { id: e.node.id },
    );
    const leaf = v.devices.find((d) => d.role === 'RACK_LEAF');
    if (!leaf || v.freeUnits < 2) continue;
    const taken = new Set();
    for (const d of v.devices) for (let u = d.position; u < d.position + d.height; u++) taken.add(u);
    for (let u = 1; u < v.rack.height; u++) {
      if (!taken.has(u) && !taken.has(u + 1)) return { rack: v.rack, leaf, unit: u };
    }
  }
  throw new Error('the demo has no rack with a leaf switch and two adjacent free units');
}

let state = null;

/** Waits until the change log filtered to one object shows a row with action. */
async function changeLogShows(page, type, id, action) {
  await page.goto(`/changes?objectType=${type}&objectID=${id}`);
  const row = page.locator(`[data-testid="change"][data-action="${action}"]`).first();
  await row.waitFor();
  return row;
}

export const tests = [
  {
    name: 'mount a device by clicking free units in the rack elevation',
    async run(ctx) {
      const picked = await pickRack(ctx);
      const page = await ctx.page();
      await page.goto(`/racks/${picked.rack.id}`);
      await page.getByTestId('device').first().waitFor();
      await page.locator(`[data-testid="free-unit"][data-unit="${picked.unit}"][data-face="FRONT"]`).click();
      const form = page.getByRole('form', { name: /Mount a device at U/ });
      await form.waitFor();
      const name = `e2e-srv-${Date.now().toString(36)}`;
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Model').fill('E2E 2U');
      await form.getByLabel('Height (U)').fill('2');
      assert.equal(await page.getByTestId('picked-unit').count(), 2, 'the picked units are highlighted');
      await form.getByRole('button', { name: 'Mount device' }).click();
      const drawn = page.locator(`[data-testid="device"][data-name="${name}"]`);
      await drawn.waitFor();
      assert.equal(await drawn.getAttribute('data-position'), String(picked.unit));
      assert.equal(await drawn.getAttribute('data-height'), '2');
      const { hosts } = await ctx.gql('query($n: String!) { hosts(where: { name: $n }) { edges { node { id position height face rack { id } } } } }', { n: name });
      const h = hosts.edges[0].node;
      assert.deepEqual([h.position, h.height, h.face, h.rack.id], [picked.unit, 2, 'FRONT', picked.rack.id]);
      state = { ...picked, host: { id: h.id, name } };
      await ctx.screenshot(page, 'rack-mount');
      await page.context().close();
    },
  },
  {
    name: 'add a port, cable it to the rack leaf and see the path trace; delete names the dependents',
    async run(ctx) {
      assert.ok(state, 'the mount test ran first');
      // a free port on the leaf to plug into
      const leafPort = `e2e-swp-${Date.now().toString(36)}`;
      await ctx.gql('mutation($in: CreatePortInput!) { createPort(input: $in) { id } }', { in: { name: leafPort, hostID: state.leaf.id } });

      const page = await ctx.page();
      await page.goto(`/hosts/${state.host.id}`);
      const portForm = page.getByRole('form', { name: 'New port' });
      await portForm.getByLabel('Port name').fill('eth0');
      await portForm.getByRole('button', { name: 'Add port' }).click();
      await page.getByTestId('port').filter({ hasText: 'eth0' }).waitFor();

      const cable = page.getByRole('form', { name: 'Connect a cable' });
      await cable.getByLabel("This device's port").selectOption({ label: 'eth0' });
      await cable.getByLabel('Other device (search by name)').fill(state.leaf.name);
      const other = cable.getByLabel('Other device', { exact: true });
      await other.locator(`option[value="${state.leaf.id}"]`).waitFor({ state: 'attached' });
      await other.selectOption(state.leaf.id);
      const its = cable.getByLabel('Its port');
      await its.locator('option', { hasText: leafPort }).waitFor({ state: 'attached' });
      await its.selectOption({ label: leafPort });
      await cable.getByRole('button', { name: 'Connect' }).click();

      // the trace page of eth0: its first hop is the leaf
      await page.waitForURL('**/network/trace/*');
      await page.getByTestId('trace-start').waitFor();
      await page.locator(`[data-testid="trace-hop"][data-to="${state.leaf.id}"]`).first().waitFor();
      const portID = page.url().split('/').pop();
      const { tracePath } = await ctx.gql('query($p: ID!) { tracePath(portID: $p) { hops { toHostID } } }', { p: portID });
      assert.equal(tracePath.hops[0].toHostID, state.leaf.id, 'the API traces through the new cable');
      assert.equal(await page.getByTestId('trace-hop').count(), tracePath.hops.length);
      await ctx.screenshot(page, 'cable-trace');

      // deleting the device is refused while its port exists: the page names the dependents
      await page.goto(`/hosts/${state.host.id}`);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      const deps = page.getByTestId('dependents');
      await deps.waitFor();
      assert.match(await deps.innerText(), /ports/);
      state.portID = portID;
      await page.context().close();
    },
  },
  {
    name: 'change log: the mount, an edit and the cable with their before/after diffs',
    async run(ctx) {
      assert.ok(state?.portID, 'the cable test ran first');
      const page = await ctx.page();
      // edit the device's model in the UI
      await page.goto(`/hosts/${state.host.id}`);
      await page.getByRole('button', { name: 'Edit device' }).click();
      const edit = page.getByRole('form', { name: 'Edit device' });
      await edit.getByLabel('Model').fill('E2E 2U rev B');
      await edit.getByRole('button', { name: 'Save device' }).click();
      await edit.getByText('Saved.').waitFor();

      // the host page links to its history
      await page.getByRole('link', { name: 'History' }).click();
      await page.waitForURL(`**/changes?objectType=Host&objectID=${state.host.id}`);
      const update = page.locator('[data-testid="change"][data-action="updateHost"]').first();
      await update.waitFor();
      await update.getByRole('button', { name: 'Diff' }).click();
      const model = page.getByTestId('change-diff').locator('tr[data-field="model"]');
      await model.waitFor();
      assert.equal(await model.locator('.diff-before').innerText(), 'E2E 2U');
      assert.equal(await model.locator('.diff-after').innerText(), 'E2E 2U rev B');

      const create = page.locator('[data-testid="change"][data-action="createHost"]').first();
      await create.getByRole('button', { name: 'Diff' }).click();
      await page.locator('tr.diff-added[data-field="name"]').filter({ hasText: state.host.name }).waitFor();

      // the cable: createLink
      const { node } = await ctx.gql('query($id: ID!) { node(id: $id) { ... on Port { linkA { id } linkB { id } } } }', { id: state.portID });
      const link = node.linkA ?? node.linkB;
      await changeLogShows(page, 'Link', link.id, 'createLink');
      // filter by who: the admin token's user
      await page.getByLabel('Who').fill('nobody-such');
      await page.getByText('No change matches these filters.').waitFor();
      await ctx.screenshot(page, 'change-log');
      await page.context().close();
    },
  },
  {
    name: 'IPAM: a network with utilization; allocate, then release an address; both in the change log',
    async run(ctx) {
      const { networks } = await ctx.gql('{ networks(first: 200) { edges { node { id name cidr utilization { free allocated } } } } }');
      const net = networks.edges.map((e) => e.node).find((n) => n.utilization.free > 10 && n.cidr.includes('.'));
      assert.ok(net, 'the demo has an IPv4 network with free addresses');
      const page = await ctx.page();
      await page.goto('/ipam/networks');
      await page.locator(`[data-testid="network"][data-name="${net.name}"]`).getByRole('link', { name: net.name }).click();
      await page.waitForURL(`**/ipam/networks/${net.id}`);
      const allocated = page.getByTestId('allocated');
      await allocated.waitFor();
      const before = Number((await allocated.innerText()).replace(/\D/g, ''));
      assert.equal(before, net.utilization.allocated);

      const form = page.getByRole('form', { name: 'Allocate an address' });
      await form.getByLabel('DNS name').fill('e2e.example.test');
      await form.getByRole('button', { name: 'Allocate' }).click();
      const note = page.getByRole('status').filter({ hasText: 'Allocated' });
      await note.waitFor();
      const address = (await note.innerText()).match(/Allocated (\S+)\./)[1];
      const row = page.locator(`[data-testid="address"][data-address="${address}"]`);
      await row.waitFor();
      await page.waitForFunction((n) => document.querySelector('[data-testid="allocated"]')?.textContent.replace(/\D/g, '') === String(n), before + 1);

      const { ipAddresses } = await ctx.gql('query($a: String!) { ipAddresses(where: { address: $a }) { edges { node { id dnsName } } } }', { a: address });
      const ip = ipAddresses.edges[0].node;
      assert.equal(ip.dnsName, 'e2e.example.test');

      await row.getByRole('button', { name: `Release ${address}` }).click();
      await row.waitFor({ state: 'detached' });
      await page.getByRole('status').filter({ hasText: `Released ${address}` }).waitFor();

      const alloc = await changeLogShows(page, 'IPAddress', ip.id, 'allocateIPAddress');
      await alloc.getByRole('button', { name: 'Diff' }).click();
      await page.locator('tr.diff-added[data-field="address"]').filter({ hasText: address }).waitFor();
      await page.locator(`[data-testid="change"][data-action="releaseIPAddress"]`).first().waitFor();
      await page.context().close();
    },
  },
];
