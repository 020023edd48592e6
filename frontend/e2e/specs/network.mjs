// Network map and path trace: the graph drawn from a demo server matches the API's
// networkDiagram node for node and edge for edge, a clicked node opens the side panel, hover
// shows a port's MAC, and the trace of one of the server's ports climbs to a gateway as
// tracePath says.
import assert from 'node:assert/strict';

const DIAGRAM = `query($from: ID!, $depth: Int) { networkDiagram(from: $from, depth: $depth) {
  truncated nodes { id kind name role } edges { id kind source target sourcePort { id name mac } }
} }`;

/** A demo server with its ports. */
async function demoServer(ctx) {
  const d = await ctx.gql(`{ hosts(first: 1, where: { kind: SERVER, nameContainsFold: "server01" }, orderBy: { field: NAME }) {
    edges { node { id name ports(first: 10) { edges { node { id name mac } } } } } } }`);
  const host = d.hosts.edges[0]?.node;
  assert.ok(host, 'the demo has a server');
  return { ...host, ports: host.ports.edges.map((e) => e.node) };
}

/** Waits until the map from start has drawn and returns what it drew. */
async function drawn(page, start) {
  const graph = page.locator(`[data-testid="network-graph"][data-start="${start}"]`);
  const t0 = Date.now();
  await page.locator(`[data-testid="network-graph"][data-start="${start}"][data-ready="true"]`).waitFor({ timeout: 40_000 });
  console.log(`     map drawn after ${Date.now() - t0} ms (layout ${await graph.getAttribute('data-layout-ms')} ms)`);
  return {
    graph,
    nodeCount: Number(await graph.getAttribute('data-node-count')),
    edgeCount: Number(await graph.getAttribute('data-edge-count')),
    ids: await page.evaluate(() => ({ nodes: [...window.__vfNetwork.nodes], edges: [...window.__vfNetwork.edges] })),
  };
}

/** Moves the mouse onto node id of the drawn graph (it must be in view) and returns the point. */
async function pointAt(page, graph, id) {
  const pos = await page.evaluate((nid) => window.__vfNetwork.position(nid), id);
  const box = await graph.boundingBox();
  assert.ok(pos, `node ${id} is drawn`);
  const x = box.x + pos.x;
  const y = box.y + pos.y;
  assert.ok(x > box.x && x < box.x + box.width && y > box.y && y < box.y + box.height, `node ${id} is in view`);
  return { x, y };
}

/** The groups the map drew (lib/network/group.ts): the network and how many members each stands for. */
async function groupsOn(page) {
  return page.getByTestId('group-expand').evaluateAll((els) => els.map((e) => ({ hub: e.dataset.hub, members: Number(e.dataset.members) })));
}

/** What was drawn is the API's diagram, a group node standing for the members of its network. */
function assertDrawn(g, api, groups) {
  const hidden = groups.reduce((n, x) => n + x.members, 0);
  assert.equal(g.nodeCount, api.nodes.length - hidden + groups.length, 'nodes drawn = API nodes, with groups');
  for (const x of groups) assert.ok(g.ids.nodes.includes(`group:${x.hub}`), `group of ${x.hub} drawn`);
  if (groups.length > 0) return;
  assert.equal(g.edgeCount, api.edges.length, 'edges drawn = API edges');
  assert.deepEqual([...g.ids.nodes].sort(), api.nodes.map((n) => n.id).sort());
  assert.deepEqual([...g.ids.edges].sort(), api.edges.map((e) => e.id).sort());
}

export const tests = [
  {
    name: 'network map from a server draws the API diagram; click selects, hover shows ports',
    async run(ctx) {
      const host = await demoServer(ctx);
      // ask the API while the browser draws (the demo server is slow on a loaded machine)
      const asked = ctx.gql(DIAGRAM, { from: host.id, depth: 2 });
      const page = await ctx.page();
      await page.goto(`/network?from=${host.id}&depth=2`);
      const g = await drawn(page, host.id);
      // the layout ran in elkjs's worker (elkInWorker.ts), not on the page's thread
      const workers = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name).filter((n) => /elk-worker/.test(n)));
      assert.equal(workers.length, 1, 'the ELK worker script was loaded once');
      const api = (await asked).networkDiagram;
      const nodeIds = new Set(api.nodes.map((n) => n.id));
      const edges = api.edges.filter((e) => nodeIds.has(e.source) && nodeIds.has(e.target));
      assert.equal(edges.length, api.edges.length, 'the API returns no dangling edges');
      assertDrawn(g, api, await groupsOn(page));
      if (api.truncated) await page.getByText('Truncated:').waitFor();

      // the start is selected at first: its panel lists its ports
      const panel = page.getByRole('region', { name: 'Selected node' });
      await panel.getByRole('heading', { name: host.name }).waitFor();
      await panel.getByText(host.ports[0].name, { exact: true }).first().waitFor();

      // hover the start: the tooltip shows a port's MAC
      const here = await pointAt(page, g.graph, host.id);
      await page.mouse.move(here.x, here.y);
      const mac = host.ports.find((p) => p.mac)?.mac;
      const tip = page.getByRole('tooltip');
      await tip.waitFor();
      if (mac) assert.ok((await tip.textContent()).includes(mac), 'tooltip shows the MAC');
      await page.mouse.move(5, 5);
      await tip.waitFor({ state: 'detached' });
      await ctx.screenshot(page, 'network-map');

      // click one of its uplink devices: the panel shows it with Re-center and its page
      const link = api.edges.find((e) => e.kind === 'LINK' && e.source === host.id);
      assert.ok(link, 'the server has an uplink');
      const peer = api.nodes.find((n) => n.id === link.target);
      const there = await pointAt(page, g.graph, peer.id);
      await page.mouse.click(there.x, there.y);
      await panel.getByRole('heading', { name: peer.name }).waitFor();
      assert.equal(await panel.getByRole('link', { name: /Open host page/ }).getAttribute('href'), `/hosts/${peer.id}`);
      const asked2 = ctx.gql(DIAGRAM, { from: peer.id, depth: 2 });
      await panel.getByRole('button', { name: 'Re-center here' }).click();
      await page.waitForURL((u) => u.searchParams.get('from') === peer.id);
      const again = await drawn(page, peer.id);
      const api2 = (await asked2).networkDiagram;
      assertDrawn(again, api2, await groupsOn(page));
      await page.context().close();
    },
  },
  {
    name: 'network map without a start offers a search; path trace climbs to the gateways',
    async run(ctx) {
      const host = await demoServer(ctx);
      const page = await ctx.page();
      // a start that does not exist: the API's error as a message, not a blank page
      await page.goto('/network?from=4242424242&depth=2');
      await page.getByRole('alert').or(page.getByText('There is nothing to draw')).first().waitFor();
      await page.goto('/network');
      await page.getByLabel('Search hosts and networks').fill(host.name);
      await page.getByRole('link', { name: host.name, exact: true }).click();
      await page.waitForURL((u) => u.searchParams.get('from') === host.id);
      await drawn(page, host.id);

      const port = host.ports[0];
      const t = (await ctx.gql(`query($p: ID!) { tracePath(portID: $p) { reachedGateway
        hops { level linkID toHostID toRole } } }`, { p: port.id })).tracePath;
      await page.getByRole('link', { name: 'Trace ↑' }).first().click();
      await page.waitForURL(`**/network/trace/${port.id}`);
      await page.getByTestId('trace-start').waitFor();
      const levels = [...new Set(t.hops.map((h) => h.level))];
      assert.equal(await page.getByTestId('trace-level').count(), levels.length, 'one row per level');
      assert.equal(await page.getByTestId('trace-hop').count(), t.hops.length, 'one entry per hop');
      assert.ok(t.reachedGateway, 'the demo server reaches a gateway');
      await page.getByText('Reaches the gateways').waitFor();
      const top = Math.max(...levels);
      const gateways = t.hops.filter((h) => h.level === top && h.toRole === 'GATEWAY_ROUTER').map((h) => h.toHostID);
      assert.ok(gateways.length > 0, 'the top level reaches gateway routers');
      const drawnTop = await page.locator(`[data-testid="trace-level"][data-level="${top}"] [data-testid="trace-hop"]`)
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-to')));
      assert.deepEqual(new Set(drawnTop), new Set(t.hops.filter((h) => h.level === top).map((h) => h.toHostID)));
      await ctx.screenshot(page, 'path-trace');
      await page.getByRole('link', { name: 'Show on the network map' }).click();
      await page.waitForURL('**/network?from=*');
      await page.context().close();
    },
  },
  {
    name: 'a network’s many members are one node that expands on click',
    async run(ctx) {
      const host = await demoServer(ctx);
      const asked = ctx.gql(DIAGRAM, { from: host.id, depth: 2 });
      const page = await ctx.page();
      await page.goto(`/network?from=${host.id}&depth=2`);
      const g = await drawn(page, host.id);
      const groups = await groupsOn(page);
      assert.ok(groups.length > 0, 'at depth 2 a network of many servers is grouped');
      const api = (await asked).networkDiagram;
      console.log(`     grouped: ${g.nodeCount} nodes, ${g.edgeCount} edges drawn for the API's ${api.nodes.length} and ${api.edges.length}`);
      assert.ok(g.nodeCount < api.nodes.length / 2, `grouped: ${g.nodeCount} nodes drawn of ${api.nodes.length}`);
      await page.getByRole('button', { name: 'Fit all' }).click();
      const at = await pointAt(page, g.graph, `group:${groups[0].hub}`);
      await page.mouse.click(at.x, at.y);
      await page.waitForFunction(
        (n) => {
          const el = document.querySelector('[data-testid="network-graph"]');
          return el?.getAttribute('data-ready') === 'true' && Number(el.getAttribute('data-node-count')) > n;
        },
        g.nodeCount,
        { timeout: 40_000 },
      );
      const after = await drawn(page, host.id);
      const left = await groupsOn(page);
      assert.ok(!left.some((x) => x.hub === groups[0].hub), 'the expanded network is no longer grouped');
      assertDrawn(after, api, left);
      // the network is selected: its panel lists it
      const hub = api.nodes.find((n) => n.id === groups[0].hub);
      await page.getByRole('region', { name: 'Selected node' }).getByRole('heading', { name: hub.name }).waitFor();
      await ctx.screenshot(page, 'network-group-expanded');
      await page.context().close();
    },
  },
];
