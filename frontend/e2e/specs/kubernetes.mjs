// Kubernetes clusters: from the list, create a cluster with the form, watch its page show the
// workflow's progress and turn ACTIVE with the demo's simulated guests (no reload), scale its
// workers from the page, and download the kubeconfig as the admin; a tenant member gets no
// download (the kubeconfig query is FORBIDDEN for them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

async function demo(ctx) {
  const d = await ctx.gql(`{
    tenants(where: { name: "acme" }) { edges { node { id name } } }
    regions(where: { name: "tokyo1" }) { edges { node { id name datacenters(first: 1) { edges { node { id } } } } } }
    flavors(where: { name: "s1.small" }) { edges { node { id name } } }
    networks(where: { purpose: SERVICE }) { edges { node { id datacenter { id } } } }
  }`);
  const one = (c, what) => {
    const n = c.edges[0]?.node;
    assert.ok(n, `the demo has no ${what}`);
    return n;
  };
  const region = one(d.regions, 'region tokyo1');
  // The demo has no SERVICE network for the clusters' API VIPs: an operator creates one.
  const dc = region.datacenters.edges[0].node.id;
  if (!d.networks.edges.some((e) => e.node.datacenter?.id === dc)) {
    await ctx.gql(`mutation($in: CreateNetworkInput!) { createNetwork(input: $in) { id } }`,
      { in: { name: 'e2e-k8s-service', cidr: '10.250.0.0/24', purpose: 'SERVICE', datacenterID: dc } });
  }
  return { tenant: one(d.tenants, 'tenant acme'), region, flavor: one(d.flavors, 'flavor s1.small') };
}

export const tests = [
  {
    name: 'kubernetes: list → create → progress → ACTIVE → scale → kubeconfig download',
    async run(ctx) {
      const d = await demo(ctx);
      const name = 'e2e-k8s-' + Date.now().toString(36);
      const page = await ctx.page();
      await page.goto('/');
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Kubernetes clusters' }).click();
      await page.getByRole('heading', { name: 'Kubernetes clusters' }).waitFor();
      await page.getByRole('button', { name: 'Create cluster' }).click();
      const form = page.getByRole('form', { name: 'Create Kubernetes cluster' });
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('Tenant').selectOption({ label: d.tenant.name });
      await form.getByLabel('Region').selectOption({ label: d.region.name });
      await form.getByLabel('Flavor').selectOption(d.flavor.id);
      await form.getByLabel('Control planes').fill('1');
      await form.getByLabel('Workers').fill('1');
      await ctx.screenshot(page, 'k8s-create');
      await page.evaluate(() => { window.__e2eNoReload = 'still here'; });
      const t0 = Date.now();
      await form.getByRole('button', { name: 'Create cluster' }).click();
      await page.waitForURL(/\/kubernetes\/\d+$/);
      const id = page.url().split('/').pop();

      // Progress while it provisions: the nodes appear with their states, then ACTIVE.
      await page.locator('tr[data-node-name]').first().waitFor({ timeout: 30_000 });
      const progress = await page.getByTestId('progress').innerText();
      assert.match(progress, /\d+ \/ 2 nodes ready/, 'the page shows the nodes ready out of 2');
      await page.locator('h1 [data-status="ACTIVE"]').waitFor({ timeout: 60_000 });
      console.log(`     ACTIVE shown ${Date.now() - t0} ms after create`);
      assert.equal(await page.evaluate(() => window.__e2eNoReload), 'still here', 'the page was reloaded');
      assert.equal((await page.getByTestId('progress').innerText()).trim(), '2 / 2 nodes ready');
      assert.match(await page.getByTestId('api-endpoint').innerText(), /^https:\/\/\d+\.\d+\.\d+\.\d+:6443 \(VIP /);
      const roles = await page.locator('tr[data-node-name]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-node-name')));
      assert.deepEqual(roles, [`${name}-cp-0`, `${name}-w-0`]);
      assert.equal(await page.locator(`tr[data-node-name="${name}-cp-0"] a[href^="/vms/"]`).count(), 1, 'the node links its VM');
      await ctx.screenshot(page, 'k8s-active');

      // The kubeconfig download is offered to the admin and is the API's kubeconfig.
      const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('kubeconfig-download').click()]);
      assert.equal(dl.suggestedFilename(), `${name}.kubeconfig`);
      const text = readFileSync(await dl.path(), 'utf8');
      assert.match(text, /certificate-authority-data/);
      assert.match(text, /client-key-data/);

      // A tenant member (the demo's alice, of acme) sees the cluster but no download: the
      // kubeconfig query answers FORBIDDEN.
      const alice = (await ctx.gql('{ users(where: { username: "alice" }) { edges { node { id tenants { edges { node { name } } } } } } }')).users.edges[0]?.node;
      assert.ok(alice?.tenants.edges.some((e) => e.node.name === d.tenant.name), 'the demo has alice, a member of acme');
      const made = await ctx.gql('mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }',
        { in: { name: 'e2e-k8s-alice', scope: 'READ_ONLY', userID: alice.id } });
      const member = await ctx.page({ token: made.createAPIToken.token });
      // urql sends queries as GET: the operation's name is in the URL.
      const kcAnswer = member.waitForResponse((r) => r.url().includes('KubernetesKubeconfig'));
      await member.goto(`/kubernetes/${id}`);
      await member.locator('h1 [data-status="ACTIVE"]').waitFor();
      const answer = await (await kcAnswer).json();
      assert.equal(answer.errors?.[0]?.extensions?.code, 'FORBIDDEN', 'a member reading the kubeconfig');
      assert.equal(await member.getByTestId('kubeconfig-download').count(), 0, 'a member is offered the kubeconfig');
      await member.context().close();

      // Scale to 2 workers from the page: UPDATING, then ACTIVE with 3 nodes ready.
      const scale = page.getByRole('form', { name: 'Scale workers' });
      await scale.getByLabel('Workers').fill('2');
      await scale.getByRole('button', { name: 'Scale' }).click();
      await page.getByTestId('worker-count').filter({ hasText: '2' }).waitFor();
      await page.getByTestId('progress').filter({ hasText: '3 / 3 nodes ready' }).waitFor({ timeout: 60_000 });
      await page.locator('h1 [data-status="ACTIVE"]').waitFor({ timeout: 60_000 });
      const api = await ctx.gql('query($id: ID!) { node(id: $id) { ... on KubernetesCluster { status workerCount nodes { name state } } } }', { id });
      assert.equal(api.node.status, 'ACTIVE');
      assert.equal(api.node.workerCount, 2);
      assert.equal(api.node.nodes.filter((n) => n.state === 'READY').length, 3);

      // The list shows it with its nodes ready.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Kubernetes clusters' }).click();
      const row = page.locator(`tr[data-cluster-id="${id}"]`);
      await row.getByTestId('nodes-ready').filter({ hasText: '3 / 3' }).waitFor();
      assert.match(await row.innerText(), new RegExp(`${name}\\s+${d.tenant.name}\\s+${d.region.name}\\s+v1\\.31\\.2\\s+active`));
      await ctx.screenshot(page, 'k8s-list');
    },
  },
];
