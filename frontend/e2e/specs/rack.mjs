// Datacenter → floor → rack → host: what the pages draw is compared with what the API returns.
import assert from 'node:assert/strict';

/** The fullest 42U server rack of the demo (floorView over every floor), with its floor. */
let picked = null;
async function pickRack(ctx) {
  picked ??= findRack(ctx);
  return picked;
}

async function findRack(ctx) {
  const { floors } = await ctx.gql('{ floors(first: 50) { edges { node { id } } } }');
  const views = await Promise.all(
    floors.edges.map((e) =>
      ctx.gql(
        'query($id: ID!) { floorView(id: $id) { id name racks { rack { id name height } hosts usedUnits capacity { nodes } alerts { worst } } } }',
        { id: e.node.id },
      ),
    ),
  );
  let best = null;
  for (const { floorView } of views) {
    for (const r of floorView.racks) {
      if (r.rack.height !== 42 || r.capacity.nodes === 0) continue;
      if (!best || r.hosts > best.rack.hosts) best = { floor: floorView, rack: r };
    }
  }
  assert.ok(best, 'the demo has a 42U server rack');
  return best;
}

const ELEVATION = `query($id: ID!) { rackElevation(id: $id) { rack { id name height floorName datacenterName }
  devices { id name model position height face fullDepth kind role node { id status vmCount } } } }`;

export const tests = [
  {
    name: 'rack elevation draws exactly the API devices; tooltip; click through to the host and its ports',
    async run(ctx) {
      const { rack } = await pickRack(ctx);
      const { rackElevation: api } = await ctx.gql(ELEVATION, { id: rack.rack.id });
      assert.ok(api.devices.length >= 10, `rack ${api.rack.name} has many devices`);
      const page = await ctx.page();
      const devices = page.getByTestId('device');

      // Fresh loads of the rack page (new document, the queries uncached), timed from navigation
      // until the lowest device is drawn and all are there. The first visit also loads the
      // page's code and meets a server still busy with the demo fleet registering.
      const timeLoad = async () => {
        const t0 = Date.now();
        await page.goto(`/racks/${api.rack.id}`);
        const lowest = api.devices.reduce((a, d) => (d.position < a.position ? d : a));
        await page.locator(`[data-testid="device"][data-name="${lowest.name}"]`).waitFor();
        await page.waitForFunction((n) => document.querySelectorAll('[data-testid="device"]').length >= n, api.devices.length);
        return Date.now() - t0;
      };
      const first = await timeLoad();
      const again = await timeLoad();
      console.log(`     rack page: ${again} ms (${api.devices.length} devices, ${api.rack.height}U; first visit ${first} ms)`);

      const drawn = await devices.evaluateAll((els) =>
        els.map((e) => `${e.getAttribute('data-name')}@${e.getAttribute('data-position')}/${e.getAttribute('data-face')}`).sort(),
      );
      const expected = api.devices.map((d) => `${d.name}@${d.position}/${d.face}`).sort();
      assert.deepEqual(drawn, expected);
      // full-depth devices also show on the far face
      assert.equal(await page.getByTestId('device-far-face').count(), api.devices.filter((d) => d.fullDepth).length);

      // breadcrumbs datacenter / floor / rack
      const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
      await crumbs.getByRole('link', { name: api.rack.datacenterName }).waitFor();
      await crumbs.getByRole('link', { name: api.rack.floorName }).waitFor();

      // hover a server: its tooltip names it, its model and node state
      const server = api.devices.find((d) => d.node?.vmCount > 0) ?? api.devices.find((d) => d.node) ?? api.devices[0];
      const hostQuery = ctx.gql('query($id: ID!) { node(id: $id) { ... on Host { name ports(first: 200) { edges { node { name } } } } } }', { id: server.id });
      const el = page.locator(`[data-testid="device"][data-name="${server.name}"]`);
      await el.hover();
      const tip = page.getByTestId('device-tooltip');
      await tip.getByText(server.name).waitFor();
      await tip.getByText(server.model, { exact: false }).first().waitFor();
      assert.match(await tip.innerText(), /vCPU \d+\/\d+/);
      await ctx.screenshot(page, 'rack-elevation');
      // coloured by role, as NetBox does: network gear by its fabric role, other devices by kind
      await page.getByLabel('role', { exact: true }).check();
      const byRole = await devices.evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-name'), e.getAttribute('data-state')])));
      assert.deepEqual(byRole, Object.fromEntries(api.devices.map((d) => [d.name, d.role ?? d.kind])), 'devices coloured by role');
      await ctx.screenshot(page, 'rack-elevation-roles');
      await page.getByLabel('compute node state').check();

      // click through to the host page: its ports as the API has them
      await el.click();
      await page.waitForURL(`**/hosts/${server.id}`);
      const { node: host } = await hostQuery;
      await page.getByRole('heading', { name: host.name, exact: true }).waitFor();
      const ports = page.getByTestId('port');
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="port"]').length === n, host.ports.edges.length);
      assert.ok(host.ports.edges.length > 0, 'the server has ports');
      for (const p of host.ports.edges) await ports.getByText(p.node.name, { exact: true }).first().waitFor();
      await page.getByRole('button', { name: 'Network map' }).waitFor();
      await ctx.screenshot(page, 'host');
      await page.context().close();
    },
  },
  {
    name: 'floor plan: every rack drawn, colour toggle, tooltip, click opens the rack',
    async run(ctx) {
      const { floor } = await pickRack(ctx);
      const page = await ctx.page();
      await page.goto(`/floors/${floor.id}`);
      await page.getByRole('heading', { name: floor.name, exact: true }).waitFor();
      const racks = page.getByTestId('floor-rack');
      await racks.first().waitFor();
      const drawn = (await racks.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).sort();
      assert.deepEqual(drawn, floor.racks.map((r) => r.rack.name).sort());

      // colour by alerts: a rack with an open alert takes its severity's colour
      await page.getByRole('tab', { name: 'Alerts' }).click();
      for (const r of floor.racks) {
        const colour = await page.locator(`[data-testid="floor-rack"][data-name="${r.rack.name}"]`).getAttribute('data-colour');
        assert.equal(colour, r.alerts.worst ?? 'none', r.rack.name);
      }
      await page.getByRole('tab', { name: 'Occupancy' }).click();
      const busiest = floor.racks.reduce((a, r) => (r.usedUnits > a.usedUnits ? r : a));
      const target = page.locator(`[data-testid="floor-rack"][data-name="${busiest.rack.name}"]`);
      await target.hover();
      await page.getByTestId('rack-tooltip').getByText(`${busiest.usedUnits}/${busiest.rack.height} U`, { exact: false }).waitFor();
      await ctx.screenshot(page, 'floor-plan');
      await target.click();
      await page.waitForURL(`**/racks/${busiest.rack.id}`);
      await page.getByRole('heading', { name: busiest.rack.name, exact: true }).waitFor();
      await page.context().close();
    },
  },
  {
    name: 'datacenters list their floors; an unknown rack shows the API error',
    async run(ctx) {
      const { regions } = await ctx.gql('{ regions(first: 10) { edges { node { datacenters(first: 10) { edges { node { id name } } } } } } }');
      const dc = regions.edges[0].node.datacenters.edges[0].node;
      const { datacenterView } = await ctx.gql('query($id: ID!) { datacenterView(id: $id) { floors { id name } } }', { id: dc.id });
      const page = await ctx.page();
      await page.goto('/datacenters');
      await page.getByTestId('datacenter').first().getByText('Rack units').waitFor();
      await ctx.screenshot(page, 'datacenters');
      await page.getByRole('link', { name: dc.name }).click();
      await page.waitForURL(`**/datacenters/${dc.id}`);
      for (const f of datacenterView.floors) await page.getByRole('link', { name: f.name }).waitFor();
      assert.equal(await page.getByTestId('floor').count(), datacenterView.floors.length);
      await ctx.screenshot(page, 'datacenter');

      await page.goto('/racks/999999999');
      await page.getByRole('alert').getByText('NOT_FOUND').waitFor();
      await page.context().close();
    },
  },
];
