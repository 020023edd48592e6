// VMs, placement and the cluster virtual rack: create a VM from the form and watch it turn
// ACTIVE live (no reload), find it in /vms, stop it from the list; a request that fits nowhere
// shows the error code and the placement explanation; the virtual rack matches clusterView.
import assert from 'node:assert/strict';

async function demo(ctx) {
  const d = await ctx.gql(`{
    tenants(where: { name: "acme" }) { edges { node { id name } } }
    regions(where: { name: "tokyo1" }) { edges { node { id name } } }
    flavors(where: { name: "s1.small" }) { edges { node { id name } } }
    images(where: { name: "ubuntu-24.04" }) { edges { node { id name } } }
    clusters(where: { name: "tky1-cluster-1" }) { edges { node { id name } } }
  }`);
  const one = (c, what) => {
    const n = c.edges[0]?.node;
    assert.ok(n, `the demo has no ${what}`);
    return n;
  };
  return {
    tenant: one(d.tenants, 'tenant acme'),
    region: one(d.regions, 'region tokyo1'),
    flavor: one(d.flavors, 'flavor s1.small'),
    image: one(d.images, 'image ubuntu-24.04'),
    cluster: one(d.clusters, 'cluster tky1-cluster-1'),
  };
}

async function fillForm(page, { name, tenant, region, flavorID, image }) {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Tenant').selectOption({ label: tenant });
  await page.getByLabel('Region').selectOption({ label: region });
  await page.getByLabel('Flavor').selectOption(flavorID);
  if (image) await page.getByLabel('Image').selectOption({ label: image });
}

export const tests = [
  {
    name: 'vms: create a VM from the form, see it turn ACTIVE live, find it in the list, stop it',
    async run(ctx) {
      const d = await demo(ctx);
      const name = 'e2e-vm-' + Date.now().toString(36);
      const page = await ctx.page();
      const tForm = Date.now();
      await page.goto('/vms/new');
      await fillForm(page, { name, tenant: d.tenant.name, region: d.region.name, flavorID: d.flavor.id, image: d.image.name });
      console.log(`     form filled in ${Date.now() - tForm} ms`);
      // No network chosen: the form names the tenant's default VM network the NIC goes on.
      const note = await page.getByRole('note').filter({ hasText: "the tenant's default VM network" }).innerText();
      assert.match(note, /NIC on \S+-vm \(172\.16\./, 'the form names the default VM network');
      await ctx.screenshot(page, 'vm-create');
      await page.evaluate(() => { window.__e2eNoReload = 'still here'; });
      const tCreate = Date.now();
      await page.getByRole('button', { name: 'Create VM' }).click();
      await page.waitForURL(/\/vms\/\d+$/);
      console.log(`     created in ${Date.now() - tCreate} ms`);
      const id = page.url().split('/').pop();

      // The status turns ACTIVE through the subscription: the page is never reloaded.
      const t0 = Date.now();
      await page.locator('h1 [data-status="ACTIVE"]').waitFor({ timeout: 30_000 });
      console.log(`     ACTIVE shown ${Date.now() - t0} ms after the VM page opened`);
      assert.equal(await page.evaluate(() => window.__e2eNoReload), 'still here', 'the page was reloaded');
      const api = await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { name status node { name } tenant { name } } } }', { id });
      assert.equal(api.node.name, name);
      assert.equal(api.node.status, 'ACTIVE');
      assert.equal((await page.getByTestId('vm-node').innerText()).trim(), api.node.node.name);
      await ctx.screenshot(page, 'vm-active');
      // Its status timeline, newest first: created (by the admin), sent to its node by the
      // worker, reported ACTIVE by the node's agent, each with who did it.
      const tl = Date.now();
      await page.locator('[data-testid="timeline-step"][data-to="ACTIVE"]').waitFor();
      console.log(`     timeline shows ACTIVE ${Date.now() - tl} ms after the status`);
      const steps = await page.getByTestId('timeline-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-to')));
      assert.deepEqual(steps, ['ACTIVE', 'CREATING', 'INITIALIZING'], 'the VM page shows its status timeline');

      // In the list (reached without a reload), with its status; then stop it from its row.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Virtual machines' }).click();
      await page.getByLabel('Name contains').fill(name);
      const row = page.locator(`tr[data-vm-id="${id}"]`);
      const tList = Date.now();
      await row.locator('[data-status="ACTIVE"]').waitFor();
      console.log(`     listed in ${Date.now() - tList} ms`);
      // The filtered answer replaces the whole list: only this VM is left.
      await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Virtual machines"] tbody tr').length === 1);
      await row.getByRole('button', { name: 'Stop' }).click();
      const t1 = Date.now();
      await row.locator('[data-status="STOPPED"]').waitFor({ timeout: 30_000 });
      console.log(`     STOPPED shown ${Date.now() - t1} ms after Stop`);
      const after = await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { status } } }', { id });
      assert.equal(after.node.status, 'STOPPED');
      await page.getByLabel('Name contains').fill('');
      await row.locator('[data-status="STOPPED"]').waitFor();
      const total = (await ctx.gql('{ virtualMachines(where: { statusNEQ: DELETED }) { totalCount } }')).virtualMachines.totalCount;
      await page.getByText(`${total} in all`).waitFor();
      await ctx.screenshot(page, 'vms-list');
      assert.equal(await page.evaluate(() => window.__e2eNoReload), 'still here', 'the page was reloaded');
      await page.context().close();
    },
  },
  {
    name: 'vms: a request that fits nowhere shows NO_CAPACITY and the placement explanation',
    async run(ctx) {
      const d = await demo(ctx);
      const huge = 'e2e-huge-' + Date.now().toString(36);
      await ctx.gql('mutation($n: String!) { createFlavor(input: { name: $n, vcpus: 512, memoryMB: 1024, diskGB: 10 }) { id } }', { n: huge });
      const flavorID = (await ctx.gql('query($n: String!) { flavors(where: { name: $n }) { edges { node { id } } } }', { n: huge })).flavors.edges[0].node.id;
      const x = (await ctx.gql('query($i: PlacementRequestInput!) { explainPlacement(input: $i) { placeable errorCode nodes { node { id } rejectedBy } } }',
        { i: { tenantID: d.tenant.id, regionID: d.region.id, flavorID } })).explainPlacement;
      assert.equal(x.placeable, false);
      const fit = x.nodes.filter((n) => !n.rejectedBy).length;

      const page = await ctx.page();
      await page.goto('/vms/new');
      await fillForm(page, { name: 'e2e-too-big', tenant: d.tenant.name, region: d.region.name, flavorID });
      await page.getByRole('button', { name: 'Create VM' }).click();
      await page.getByRole('alert').filter({ hasText: 'NO_CAPACITY' }).waitFor();
      const box = page.getByTestId('placement-explanation');
      await box.waitFor();
      const summary = await box.getByTestId('placement-summary').innerText();
      assert.match(summary, new RegExp(`^${fit} of ${x.nodes.length} nodes fit: ${x.nodes.length - fit} `));
      await box.getByTestId('placement-summary').click();
      assert.equal(await box.locator('tbody tr').count(), x.nodes.length);
      assert.ok(page.url().endsWith('/vms/new'));
      await ctx.screenshot(page, 'placement-explanation');
      await page.context().close();

      // A tenant member gets the verdict and the counts, not the nodes.
      const u = (await ctx.gql('mutation($n: String!) { createUser(input: { username: $n }) { id } }', { n: 'e2e-big-' + Date.now().toString(36) })).createUser;
      await ctx.gql('mutation($u: ID!, $t: ID!) { grantRole(input: { userID: $u, role: TENANT_MEMBER, tenantID: $t }) { id } }', { u: u.id, t: d.tenant.id });
      const token = (await ctx.gql('mutation($u: ID!) { createAPIToken(input: { name: "e2e", scope: READ_WRITE, userID: $u }) { token } }', { u: u.id })).createAPIToken.token;
      const member = await ctx.page({ token });
      await member.goto('/vms/new');
      await fillForm(member, { name: 'e2e-too-big', tenant: d.tenant.name, region: d.region.name, flavorID });
      await member.getByRole('button', { name: 'Create VM' }).click();
      await member.getByRole('alert').filter({ hasText: 'NO_CAPACITY' }).waitFor();
      const tbox = member.getByTestId('placement-explanation');
      await tbox.waitFor();
      const rejected = x.nodes.length - fit;
      assert.match(await tbox.getByTestId('placement-summary').innerText(), new RegExp(`^${rejected} nodes? turned away: `));
      assert.equal(await tbox.locator('table').count(), 0, 'no per-node table for a tenant member');
      assert.equal(await member.getByRole('alert').filter({ hasText: 'FORBIDDEN' }).count(), 0);
      await ctx.screenshot(member, 'placement-explanation-tenant');
      await member.context().close();
    },
  },
  {
    name: 'vms: the cluster virtual rack draws clusterView and shows a new VM live',
    async run(ctx) {
      const d = await demo(ctx);
      const page = await ctx.page();
      await page.goto('/clusters/' + d.cluster.id);
      await page.getByTestId('vr-node').first().waitFor();
      const view = (await ctx.gql('query($id: ID!) { clusterView(id: $id) { nodes { node { id } vms { id status } } } }', { id: d.cluster.id })).clusterView;
      assert.equal(await page.getByTestId('vr-node').count(), view.nodes.length);
      const vmCount = view.nodes.reduce((s, n) => s + n.vms.length, 0);
      assert.equal(await page.getByTestId('vr-vm').count(), vmCount);
      for (const n of view.nodes.filter((n) => n.vms.length > 0).slice(0, 5)) {
        for (const v of n.vms) {
          assert.equal(await page.locator(`[data-node-id="${n.node.id}"] [data-vm-id="${v.id}"]`).getAttribute('data-status'), v.status);
        }
      }
      // A VM created through the API appears in its node's box and turns ACTIVE without a reload.
      await page.evaluate(() => { window.__e2eNoReload = 'still here'; });
      const vm = (await ctx.gql(`mutation($i: CreateVirtualMachineInput!) { createVirtualMachine(input: $i) { id node { id } } }`, {
        i: { name: 'e2e-rack-' + Date.now().toString(36), tenantID: d.tenant.id, regionID: d.region.id, flavorID: d.flavor.id,
          schedulePolicy: { clusterNames: [d.cluster.name] } },
      })).createVirtualMachine;
      await page.locator(`[data-node-id="${vm.node.id}"] [data-vm-id="${vm.id}"][data-status="ACTIVE"]`).waitFor({ timeout: 30_000 });
      assert.equal(await page.getByTestId('vr-vm').count(), vmCount + 1);
      assert.equal(await page.evaluate(() => window.__e2eNoReload), 'still here');
      await ctx.screenshot(page, 'cluster-virtual-rack');
      await page.context().close();
    },
  },
  {
    name: 'vms: create a region service from the form, see its replicas live, scale it up',
    async run(ctx) {
      const d = await demo(ctx);
      const name = 'e2e-svc-' + Date.now().toString(36);
      const page = await ctx.page();
      await page.goto('/services');
      await page.getByRole('button', { name: 'Create service' }).click();
      const form = page.getByRole('form', { name: 'Create region service' });
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('Tenant').selectOption({ label: d.tenant.name });
      await form.getByLabel('Region').selectOption({ label: d.region.name });
      await form.getByLabel('Flavor').selectOption(d.flavor.id);
      await form.getByLabel('Replicas', { exact: true }).fill('2');
      await page.evaluate(() => { window.__e2eNoReload = 'still here'; });
      await form.getByRole('button', { name: 'Create service' }).click();
      await page.waitForURL(/\/services\/\d+$/);
      const id = page.url().split('/').pop();
      const rows = page.locator('table[aria-label="Replica VMs"] tbody tr');
      await page.locator('table[aria-label="Replica VMs"] [data-status="ACTIVE"]').nth(1).waitFor({ timeout: 30_000 });
      assert.equal(await rows.count(), 2);
      await page.getByLabel('Replicas').fill('3');
      await page.getByRole('button', { name: 'Scale' }).click();
      await page.locator('table[aria-label="Replica VMs"] [data-status="ACTIVE"]').nth(2).waitFor({ timeout: 30_000 });
      assert.equal(await rows.count(), 3);
      const api = await ctx.gql('query($id: ID!) { node(id: $id) { ... on RegionService { replicas virtualMachines(where: { statusNEQ: DELETED }) { totalCount } } } }', { id });
      assert.equal(api.node.replicas, 3);
      assert.equal(api.node.virtualMachines.totalCount, 3);
      assert.equal(await page.evaluate(() => window.__e2eNoReload), 'still here');
      await ctx.screenshot(page, 'region-service');
      await page.context().close();
    },
  },
  {
    name: 'vms: a tenant member sees only their tenant\'s VMs, without cluster or node columns, and their VM page',
    async run(ctx) {
      const d = await demo(ctx);
      const u = (await ctx.gql('mutation($n: String!) { createUser(input: { username: $n }) { id } }', { n: 'e2e-member-' + Date.now().toString(36) })).createUser;
      await ctx.gql('mutation($u: ID!, $t: ID!) { grantRole(input: { userID: $u, role: TENANT_MEMBER, tenantID: $t }) { id } }', { u: u.id, t: d.tenant.id });
      const token = (await ctx.gql('mutation($u: ID!) { createAPIToken(input: { name: "e2e", scope: READ_WRITE, userID: $u }) { token } }', { u: u.id })).createAPIToken.token;
      const mine = (await ctx.gql('{ virtualMachines(first: 100, where: { statusNEQ: DELETED }) { totalCount edges { node { id name tenant { name } } } } }', {}, { token })).virtualMachines;
      assert.ok(mine.totalCount > 0);
      assert.ok(mine.edges.every((e) => e.node.tenant.name === d.tenant.name));

      const page = await ctx.page({ token });
      await page.goto('/vms');
      await page.getByText(`${mine.totalCount} in all`).waitFor();
      assert.equal(await page.getByRole('alert').count(), 0, 'the tenant member sees an error');
      assert.equal(await page.getByRole('columnheader', { name: 'Cluster / node' }).count(), 0);
      const tenants = await page.locator('table[aria-label="Virtual machines"] tbody tr td:nth-child(4)').allInnerTexts();
      assert.ok(tenants.length > 0 && tenants.every((t) => t.trim() === d.tenant.name));
      await page.getByRole('link', { name: mine.edges[0].node.name, exact: true }).click();
      await page.getByRole('heading', { name: mine.edges[0].node.name }).waitFor();
      // The guest's own word, beside the domain's status (guestState).
      await page.getByTestId('vm-guest').locator('[data-status]').waitFor();
      await page.waitForLoadState('networkidle');
      const alerts = await page.getByRole('alert').allInnerTexts();
      assert.deepEqual(alerts, [], 'the VM page shows an error to the tenant member');
      assert.equal(await page.getByRole('heading', { name: 'Status timeline' }).count(), 0, 'a tenant member, who may not read the change log, gets no timeline');
      await page.context().close();
    },
  },
  {
    name: 'vms: a VM created with a volume from the form has it ATTACHED; detach it on the VM page',
    async run(ctx) {
      const d = await demo(ctx);
      const name = 'e2e-vol-' + Date.now().toString(36);
      const page = await ctx.page();
      await page.goto('/vms/new');
      await fillForm(page, { name, tenant: d.tenant.name, region: d.region.name, flavorID: d.flavor.id, image: d.image.name });
      await page.getByRole('button', { name: 'Add a volume' }).click();
      await page.getByLabel('Volume 1 size (GiB)').fill('3');
      await page.getByRole('button', { name: 'Create VM' }).click();
      await page.waitForURL(/\/vms\/\d+$/);
      const id = page.url().split('/').pop();
      const volumes = page.getByRole('region', { name: 'Volumes' });
      // ATTACHED only once the node's agent reported the domain has it; the page follows the VM's events.
      await page.locator('h1 [data-status="ACTIVE"]').waitFor({ timeout: 30_000 });
      const row = volumes.getByRole('row', { name: new RegExp(`${name}-vol1`) });
      await row.locator('[data-status="ATTACHED"]').waitFor({ timeout: 30_000 }).catch(async () => {
        await page.reload();
        await row.locator('[data-status="ATTACHED"]').waitFor({ timeout: 20_000 });
      });
      const api = await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { volumes { edges { node { id name sizeGB status } } } } } }', { id });
      const vol = api.node.volumes.edges[0].node;
      assert.equal(vol.name, `${name}-vol1`);
      assert.equal(vol.sizeGB, 3);
      assert.equal(vol.status, 'ATTACHED');
      await ctx.screenshot(page, 'vm-volume');
      await row.getByRole('button', { name: `Detach ${name}-vol1` }).click();
      // Detached: off the VM's list, AVAILABLE in the API (data kept).
      for (let i = 0; i < 100; i++) {
        const v = await ctx.gql('query($id: ID!) { node(id: $id) { ... on Volume { status } } }', { id: vol.id });
        if (v.node.status === 'AVAILABLE') break;
        assert.ok(i < 99, `volume still ${v.node.status} after detach`);
        await new Promise((r) => setTimeout(r, 200));
      }
      await page.context().close();
    },
  },
];
