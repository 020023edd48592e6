// VMs whose node is lost: the VM status filter offers UNKNOWN, an operator force-deletes a VM
// on a node that is not READY, and draining that node is refused without force (the API's
// VALIDATION error on field force is shown) and done with force after a confirmation.
import assert from 'node:assert/strict';

const first = (c, what) => {
  const n = c.edges[0]?.node;
  assert.ok(n, `the demo has no ${what}`);
  return n;
};

/** A node without agent in the demo cluster, READY then NOT_READY (as after missed heartbeats), with one VM on it. */
async function lostNodeWithVM(ctx) {
  const tag = Date.now().toString(36);
  const d = await ctx.gql(`{
    tenants(where: { name: "acme" }) { edges { node { id } } }
    regions(where: { name: "tokyo1" }) { edges { node { id } } }
    flavors(where: { name: "s1.small" }) { edges { node { id } } }
    computeNodes(first: 1, where: { hasClusterWith: [{ name: "tky1-cluster-1" }] }) { edges { node { cluster { id } providers { edges { node { id } } } } } }
  }`);
  const like = first(d.computeNodes, 'node in tky1-cluster-1');
  const host = (await ctx.gql('mutation($n: String!) { createHost(input: { name: $n }) { id } }', { n: `e2e-lost-host-${tag}` })).createHost;
  const name = `e2e-lost-node-${tag}`;
  const node = (await ctx.gql(`mutation($in: CreateComputeNodeInput!) { createComputeNode(input: $in) { id } }`, {
    in: { name, hostID: host.id, clusterID: like.cluster.id, cpuCapacity: 8, memoryCapacityMB: 16384, diskCapacityGB: 200, providerIDs: like.providers.edges.map((e) => e.node.id) },
  })).createComputeNode;
  const report = 'mutation($n: ID!, $ok: Boolean!) { reportNodeStatus(input: { nodeID: $n, healthy: $ok, message: "e2e: no heartbeat" }) { status } }';
  await ctx.gql(report, { n: node.id, ok: true });
  const vm = (await ctx.gql(`mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id name } }`, {
    in: { name: `e2e-lost-vm-${tag}`, tenantID: first(d.tenants, 'tenant acme').id, regionID: first(d.regions, 'region tokyo1').id,
      flavorID: first(d.flavors, 'flavor s1.small').id, schedulePolicy: { nodeNames: [name] } },
  })).createVirtualMachine;
  const q = 'query($id: ID!) { node(id: $id) { ... on VirtualMachine { status node { id } } } }';
  const deadline = Date.now() + 15_000;
  while ((await ctx.gql(q, { id: vm.id })).node.node?.id !== node.id) {
    assert.ok(Date.now() < deadline, 'the VM was not placed on the new node');
    await new Promise((r) => setTimeout(r, 300));
  }
  const after = (await ctx.gql(report, { n: node.id, ok: false })).reportNodeStatus;
  assert.equal(after.status, 'NOT_READY');
  return { node: { id: node.id, name }, vm };
}

export const tests = [
  {
    name: 'unknown: the VM status filter offers UNKNOWN, explains it and lists what the API has',
    async run(ctx) {
      const page = await ctx.page();
      await page.goto('/vms');
      const filter = page.getByRole('form', { name: 'Filters' }).getByLabel('Status', { exact: false }).first();
      await filter.locator('option[value="UNKNOWN"]').waitFor({ state: 'attached' });
      assert.match(await filter.locator('option[value="UNKNOWN"]').innerText(), /node DOWN: state unknown/);
      await filter.selectOption('UNKNOWN');
      await page.waitForURL(/status=UNKNOWN/);
      const api = await ctx.gql('{ virtualMachines(where: { status: UNKNOWN }) { totalCount } }');
      if (api.virtualMachines.totalCount === 0) await page.getByText('No virtual machines match these filters.').waitFor();
      else await page.getByText(`${api.virtualMachines.totalCount} in all`).waitFor();
      await page.context().close();
    },
  },
  {
    name: 'unknown: force delete a VM on a node that is not READY; drain that node only with force',
    async run(ctx) {
      const { node, vm } = await lostNodeWithVM(ctx);
      const page = await ctx.page();
      await page.goto(`/vms/${vm.id}`);
      await page.getByRole('heading', { name: vm.name }).waitFor();
      await page.getByRole('button', { name: 'Force delete' }).click();
      const confirm = page.getByRole('group', { name: `Confirm force deleting ${vm.name}` });
      assert.match(await confirm.getByTestId('force-delete-warning').innerText(), new RegExp(`node ${node.name} is not ready.*capacity and quota are freed now`));
      await ctx.screenshot(page, 'force-delete');
      await confirm.getByRole('button', { name: 'Yes, force delete' }).click();
      await page.waitForURL(/\/vms$/);
      const gone = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { status } } }', { id: vm.id }, { allowErrors: true })).data;
      assert.ok(!gone?.node || gone.node.status === 'DELETED', `the VM is gone, the API says ${JSON.stringify(gone)}`);

      await page.goto(`/nodes/${node.id}`);
      await page.getByRole('heading', { name: node.name }).waitFor();
      page.once('dialog', (d) => d.accept());
      await page.getByRole('button', { name: 'Drain', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'VALIDATION' }).filter({ hasText: 'force' }).waitFor();
      await ctx.screenshot(page, 'drain-refused');
      let question = '';
      page.once('dialog', (d) => { question = d.message(); d.accept(); });
      await page.getByRole('button', { name: 'Drain with force (node is fenced)' }).click();
      await page.getByTestId('drain-report').waitFor({ timeout: 15_000 });
      assert.match(question, /with force\?.*fenced/);
      const api = await ctx.gql('query($id: ID!) { node(id: $id) { ... on ComputeNode { schedulable drainForced } } }', { id: node.id });
      assert.equal(api.node.schedulable, false);
      assert.equal(api.node.drainForced, true);
      await page.context().close();
      // Leave the demo as the other specs expect it: the node back READY and schedulable, then gone.
      await ctx.gql(`mutation($n: ID!) { uncordonNode(id: $n) { id } reportNodeStatus(input: { nodeID: $n, healthy: true }) { id } }`, { n: node.id });
      await ctx.gql('mutation($n: ID!) { deleteComputeNode(id: $n) }', { n: node.id }, { allowErrors: true });
    },
  },
];
