// Load balancers and global services (issue 27): a load balancer created through the API shows
// in /load-balancers with its status and reason; its page edits the listeners and the
// health-check interval and the API then reads what was saved; a global service's page shows
// mode, FQDN, TTL and its member region services with their load balancer, attaches a second
// region's service and detaches the first (region closure), each checked against the API.
import assert from 'node:assert/strict';
import { seriousViolations } from '../axe.mjs';

async function demo(ctx) {
  const d = await ctx.gql(`{
    tenants(where: { name: "acme" }) { edges { node { id name } } }
    tokyo: regions(where: { name: "tokyo1" }) { edges { node { id name } } }
    osaka: regions(where: { name: "osaka1" }) { edges { node { id name } } }
  }`);
  const one = (c, what) => {
    const n = c.edges[0]?.node;
    assert.ok(n, `the demo has no ${what}`);
    return n;
  };
  return { tenant: one(d.tenants, 'tenant acme'), tokyo: one(d.tokyo, 'region tokyo1'), osaka: one(d.osaka, 'region osaka1') };
}

const stamp = Date.now().toString(36);

async function service(ctx, d, region, name) {
  const r = await ctx.gql('mutation($i: CreateRegionServiceInput!) { createRegionService(input: $i) { id name } }', {
    i: { name, tenantID: d.tenant.id, regionID: region.id, replicas: 0 },
  });
  return r.createRegionService;
}

export const tests = [
  {
    name: 'traffic: a load balancer in the list and its page; edit listeners and the check interval',
    async run(ctx) {
      const d = await demo(ctx);
      const svc = await service(ctx, d, d.tokyo, 'e2e-lb-svc-' + stamp);
      const name = 'e2e-lb-' + stamp;
      const lb = (await ctx.gql('mutation($i: CreateLoadBalancerInput!) { createLoadBalancer(input: $i) { id status statusReason } }', {
        i: { name, tenantID: d.tenant.id, regionServiceID: svc.id, listeners: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
      })).createLoadBalancer;

      // The worker's traffic loop (in --demo too) moves a new load balancer on from
      // INITIALIZING (to NOT_REALIZED here: no node serves it): wait for it to settle.
      for (let i = 0; i < 40 && lb.status === 'INITIALIZING'; i++) {
        await new Promise((r) => setTimeout(r, 250));
        Object.assign(lb, (await ctx.gql('query($id: ID!) { node(id: $id) { ... on LoadBalancer { status statusReason } } }', { id: lb.id })).node);
      }
      const page = await ctx.page();
      await page.goto('/load-balancers');
      const row = page.locator(`tr[data-lb-id="${lb.id}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), /80\/TCP → 8080/, 'the list shows the listener');
      assert.equal(await row.locator('[data-status]').getAttribute('data-status'), lb.status, 'the list shows the API status');
      await row.getByRole('link', { name }).click();
      await page.getByRole('heading', { name }).waitFor();
      assert.equal(await page.getByTestId('lb-listeners').innerText(), '80/TCP → 8080');
      if (lb.statusReason) assert.equal(await page.getByTestId('lb-reason').innerText(), lb.statusReason, 'the reason is the API one');
      // The serving nodes are the API's: none yet (the page says so rather than invent one),
      // or the nodes the traffic loop chose, one row each as nodeStates lists them.
      await page.getByRole('heading', { name: 'Serving nodes' }).waitFor();
      const served = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on LoadBalancer { nodeStates { nodeName } } } }', { id: lb.id })).node.nodeStates ?? [];
      if (served.length === 0) {
        await page.getByText('No node serves this load balancer yet.').waitFor();
      } else {
        const table = page.getByRole('table', { name: 'Serving nodes' });
        await table.waitFor();
        assert.ok(await table.locator('tbody tr').count() >= 1, 'the page lists the serving nodes');
        for (const n of served) assert.equal(await table.locator(`tr[data-node="${n.nodeName}"]`).count(), 1, `node ${n.nodeName} is listed`);
      }

      await page.getByRole('button', { name: 'Edit listeners' }).click();
      const form = page.getByRole('form', { name: 'Listeners' });
      await form.getByRole('button', { name: 'Add listener' }).click();
      const second = form.getByTestId('listener-row').nth(1);
      await second.getByLabel('Port', { exact: true }).fill('443');
      await second.getByLabel('Protocol').selectOption('HTTP');
      await second.getByLabel('Target port').fill('8443');
      await form.getByLabel('Health-check interval (ms)').fill('2500');
      await form.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('lb-listeners').filter({ hasText: '443/HTTP → 8443' }).waitFor();
      assert.equal(await page.getByTestId('lb-interval').innerText(), 'every 2500 ms');
      await ctx.screenshot(page, 'load-balancer');
      const api = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on LoadBalancer { healthCheckIntervalMs listeners { port protocol targetPort } } } }', { id: lb.id })).node;
      assert.equal(api.healthCheckIntervalMs, 2500);
      assert.deepEqual(api.listeners, [{ port: 80, protocol: 'TCP', targetPort: 8080 }, { port: 443, protocol: 'HTTP', targetPort: 8443 }]);

      // An out-of-range port never reaches the API: the form stays open with the listeners unchanged.
      await page.getByRole('button', { name: 'Edit listeners' }).click();
      await form.getByTestId('listener-row').nth(0).getByLabel('Port', { exact: true }).fill('70000');
      await form.getByLabel('Health-check interval (ms)').fill('2500');
      await form.getByRole('button', { name: 'Save' }).click();
      assert.ok(await form.isVisible(), 'an out-of-range port keeps the form open');
      await form.getByRole('button', { name: 'Cancel' }).click();
      await page.close();
    },
  },
  {
    name: 'traffic: a global service page; attach a region service, detach one (region closure)',
    async run(ctx) {
      const d = await demo(ctx);
      const tokyo = await service(ctx, d, d.tokyo, 'e2e-gs-tokyo-' + stamp);
      const osaka = await service(ctx, d, d.osaka, 'e2e-gs-osaka-' + stamp);
      await ctx.gql('mutation($i: CreateLoadBalancerInput!) { createLoadBalancer(input: $i) { id } }', {
        i: { name: 'e2e-gs-lb-' + stamp, tenantID: d.tenant.id, regionServiceID: tokyo.id, listeners: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
      });
      const name = 'e2e-gs-' + stamp;
      const fqdn = `www-${stamp}.gslb.example.com`;
      const gs = (await ctx.gql('mutation($i: CreateGlobalServiceInput!) { createGlobalService(input: $i) { id status } }', {
        i: { name, tenantID: d.tenant.id, mode: 'GSLB', fqdn, ttl: 20, regionServiceIDs: [tokyo.id] },
      })).createGlobalService;

      const page = await ctx.page();
      await page.goto('/global-services');
      const row = page.locator(`tr[data-global-service-id="${gs.id}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), new RegExp(`GSLB\\s+${fqdn.replace(/\./g, '\\.')}\\s+20 s`), 'mode, FQDN and TTL in the list');
      await row.getByRole('link', { name }).click();
      await page.getByRole('heading', { name }).waitFor();
      assert.equal(await page.getByTestId('gs-mode').innerText(), 'GSLB');
      assert.equal(await page.getByTestId('gs-fqdn').innerText(), fqdn);
      assert.equal(await page.getByTestId('gs-ttl').innerText(), '20 s');
      const members = page.getByRole('table', { name: 'Member region services' });
      const tokyoRow = members.locator(`tr[data-member-service="${tokyo.name}"]`);
      await tokyoRow.waitFor();
      assert.match(await tokyoRow.innerText(), /tokyo1/);
      assert.equal(await tokyoRow.locator('[data-status]').count(), 1, 'the member shows its load balancer status');

      const attach = page.getByRole('form', { name: 'Attach a region service' });
      await attach.getByLabel('Region service').selectOption({ label: `${osaka.name} (osaka1)` });
      await attach.getByRole('button', { name: 'Attach' }).click();
      await members.locator(`tr[data-member-service="${osaka.name}"]`).waitFor();
      await tokyoRow.getByRole('button', { name: 'Detach' }).click();
      await tokyoRow.waitFor({ state: 'detached' });
      await ctx.screenshot(page, 'global-service');
      const api = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on GlobalService { regionServices { edges { node { id } } } } } }', { id: gs.id })).node;
      assert.deepEqual(api.regionServices.edges.map((e) => e.node.id), [osaka.id], 'the API has only the attached service left');
      await page.close();
    },
  },
  {
    name: 'traffic: axe-core finds no serious violation on the load balancer and global service pages',
    async run(ctx) {
      const r = await ctx.gql('{ loadBalancers(first: 1) { edges { node { id } } } globalServices(first: 1) { edges { node { id } } } }');
      const lb = r.loadBalancers.edges[0]?.node.id;
      const gs = r.globalServices.edges[0]?.node.id;
      assert.ok(lb && gs, 'the tests before made a load balancer and a global service');
      const page = await ctx.page();
      const found = [];
      for (const p of ['/load-balancers', `/load-balancers/${lb}`, '/global-services', `/global-services/${gs}`]) {
        await page.goto(p);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle').catch(() => {});
        if (p === `/load-balancers/${lb}`) await page.getByRole('button', { name: 'Edit listeners' }).click();
        for (const v of await seriousViolations(page)) found.push(`${p}: ${v}`);
      }
      await page.context().close();
      assert.deepEqual(found, [], 'serious or critical accessibility violations');
    },
  },
];
