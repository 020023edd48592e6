// Operator pages: overview counts match the API, cordon/uncordon a node, tenant quotas, and an
// API token that works until it is revoked in the UI.
import assert from 'node:assert/strict';

const NODE_COUNTS = `{
  all: computeNodes { totalCount }
  READY: computeNodes(where: { status: READY }) { totalCount }
  NOT_READY: computeNodes(where: { status: NOT_READY }) { totalCount }
  DOWN: computeNodes(where: { status: DOWN }) { totalCount }
  UNKNOWN: computeNodes(where: { status: UNKNOWN }) { totalCount }
  cordoned: computeNodes(where: { schedulable: false }) { totalCount }
  FATAL: alerts(where: { status: OPEN, severity: FATAL }) { totalCount }
  CRITICAL: alerts(where: { status: OPEN, severity: CRITICAL }) { totalCount }
  WARNING: alerts(where: { status: OPEN, severity: WARNING }) { totalCount }
}`;

const TILES = {
  all: 'nodes-all', READY: 'nodes-READY', NOT_READY: 'nodes-NOT_READY', DOWN: 'nodes-DOWN', UNKNOWN: 'nodes-UNKNOWN',
  cordoned: 'nodes-cordoned', FATAL: 'alerts-FATAL', CRITICAL: 'alerts-CRITICAL', WARNING: 'alerts-WARNING',
};

/** The number drawn in a count tile, once loaded. */
// A count as the dashboard writes it (digits grouped the browser's way, e.g. "1,234") as a number.
const countOf = (text) => Number(text.replace(/[^\d]/g, ''));
const COUNT_TEXT = /^\d[\d,.\s\u00a0\u202f]*$/;

async function tileNumber(page, testid) {
  const n = page.getByTestId(testid).locator('.count-n');
  await page.waitForFunction(([el, re]) => el && new RegExp(re).test(el.textContent), [await n.elementHandle(), COUNT_TEXT.source], { timeout: 15_000 });
  return countOf(await n.textContent());
}

/** A plain API call with a bearer token, as a script would make it. */
async function callWith(ctx, token) {
  const r = await fetch(ctx.baseURL + '/query', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ me { id username } }' }),
  });
  const body = await r.json().catch(() => ({}));
  return { status: r.status, body };
}

export const tests = [
  {
    name: 'the overview shows the API counts of nodes by state and open alerts by severity',
    async run(ctx) {
      const t0 = Date.now();
      const lap = (what) => process.env.E2E_DEBUG && console.log(`  ${what} at ${Date.now() - t0} ms`);
      const page = await ctx.page();
      const logsBefore = await ctx.gql('{ auditLogs { totalCount } }');
      // node states change while the demo fleet starts: wait until two reads a second apart agree
      let settled = JSON.stringify(await ctx.gql(NODE_COUNTS));
      for (let i = 0; i < 15; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        const again = JSON.stringify(await ctx.gql(NODE_COUNTS));
        if (again === settled) break;
        settled = again;
      }
      lap('fleet settled');
      // then compare a fresh page with the API (again if the API moved meanwhile)
      for (let attempt = 0; attempt < 3; attempt++) {
        await page.goto('/');
        const before = await ctx.gql(NODE_COUNTS);
        await page.waitForFunction(([ids, re]) => ids.every((id) => new RegExp(re).test(document.querySelector(`[data-testid="${id}"] .count-n`)?.textContent ?? '')),
          [Object.values(TILES), COUNT_TEXT.source], { timeout: 20_000 });
        const drawn = {};
        for (const [k, id] of Object.entries(TILES)) drawn[k] = await tileNumber(page, id);
        if (process.env.E2E_DEBUG) console.log('  attempt', attempt, JSON.stringify(drawn));
        const after = await ctx.gql(NODE_COUNTS);
        const api = Object.fromEntries(Object.keys(TILES).map((k) => [k, after[k].totalCount]));
        const stable = Object.keys(TILES).every((k) => before[k].totalCount === after[k].totalCount);
        const last = `drawn ${JSON.stringify(drawn)} api ${JSON.stringify(api)}`;
        if (stable) {
          assert.deepEqual(drawn, api, last);
          break;
        }
        if (attempt === 2) assert.deepEqual(drawn, api, last);
      }
      lap('counts compared');
      assert.ok((await tileNumber(page, 'nodes-all')) > 0, 'the demo has nodes');
      // capacity per region is drawn, and the recent activity from the audit log
      await page.getByRole('table', { name: 'Recent activity' }).locator('tbody tr').first().waitFor();
      const rows = await page.getByRole('table', { name: 'Recent activity' }).locator('tbody tr').count();
      // the log only grows: at least what it held before the page opened, at most 15 rows
      assert.ok(rows >= Math.min(15, logsBefore.auditLogs.totalCount) && rows <= 15, `${rows} activity rows`);
      const newest = await ctx.gql('{ auditLogs(first: 15, orderBy: { field: CREATED_AT, direction: DESC }) { edges { node { action } } } }');
      const firstAction = await page.getByRole('table', { name: 'Recent activity' }).locator('tbody tr').first().locator('td').nth(1).textContent();
      assert.ok(newest.auditLogs.edges.some((e) => e.node.action === firstAction), `newest action ${firstAction} is in the API's newest 15`);
      const regions = await ctx.gql('{ regions { edges { node { name } } } }');
      for (const e of regions.regions.edges) await page.getByTestId(`region-${e.node.name}`).getByText('vCPUs').first().waitFor();
      lap('activity and regions');
      // a number links to its filtered list
      await page.getByTestId('nodes-READY').click();
      await page.waitForURL('**/nodes?status=READY');
      await page.getByRole('table', { name: 'Nodes' }).waitFor();
      lap('filtered list');
      await page.goto('/');
      await tileNumber(page, 'nodes-READY');
      await page.getByTestId('region-' + regions.regions.edges[0].node.name).getByText('nodes ready').first().waitFor();
      await ctx.screenshot(page, 'overview');
      await page.context().close();
    },
  },
  {
    name: 'cordon a node with a reason on its page, see it in the UI and the API, then uncordon it',
    async run(ctx) {
      const found = await ctx.gql('{ computeNodes(first: 1, where: { status: READY, schedulable: true, hasVirtualMachines: true }) { edges { node { id name } } } }');
      const fallback = await ctx.gql('{ computeNodes(first: 1, where: { schedulable: true }) { edges { node { id name } } } }');
      const node = (found.computeNodes.edges[0] ?? fallback.computeNodes.edges[0]).node;
      const reason = 'e2e: replacing a DIMM ' + Date.now();
      const t0 = Date.now();
      const lap = (what) => process.env.E2E_DEBUG && console.log(`  ${what} at ${Date.now() - t0} ms`);
      const page = await ctx.page();
      await page.goto(`/nodes/${node.id}`);
      await page.getByRole('heading', { name: node.name }).waitFor();
      lap('node page');
      await page.getByLabel('Cordon reason').fill(reason);
      await page.getByRole('button', { name: 'Cordon', exact: true }).click();
      await page.getByTestId('node-cordon').getByText(`cordoned: ${reason}`).waitFor({ timeout: 10_000 });
      lap('cordoned in the UI');
      const q = `query($id: ID!) { node(id: $id) { ... on ComputeNode { schedulable cordonReason } } }`;
      const cordoned = await ctx.gql(q, { id: node.id });
      assert.equal(cordoned.node.schedulable, false);
      assert.equal(cordoned.node.cordonReason, reason);
      await page.getByTestId('node-scheduling').getByText('cordoned').waitFor();
      await ctx.screenshot(page, 'node');

      lap('screenshot');
      await page.getByRole('button', { name: 'Uncordon' }).click();
      await page.getByTestId('node-cordon').getByText('schedulable', { exact: true }).waitFor({ timeout: 10_000 });
      lap('uncordoned in the UI');
      const back = await ctx.gql(q, { id: node.id });
      assert.equal(back.node.schedulable, true);
      await page.getByLabel('Cordon reason').waitFor();
      await page.context().close();
    },
  },
  {
    name: 'a tenant page shows its quotas with usage as the API reports them',
    async run(ctx) {
      const t = await ctx.gql('{ tenants(first: 1, orderBy: { field: NAME }) { edges { node { id name virtualMachines { totalCount } } } } }');
      const tenant = t.tenants.edges[0].node;
      const usage = await ctx.gql('query($id: ID!) { quotaUsage(tenantID: $id) { hostGroupName usedVCPUs vcpuLimit } }', { id: tenant.id });
      const page = await ctx.page();
      await page.goto(`/tenants/${tenant.id}`);
      await page.getByRole('table', { name: 'Quotas' }).waitFor();
      const rows = page.getByRole('table', { name: 'Quotas' }).locator('tbody tr');
      assert.equal(await rows.count(), usage.quotaUsage.length);
      // numbers are grouped the browser's way ("1,024" in en-US)
      const locale = await page.evaluate(() => navigator.language);
      const n = (v) => new Intl.NumberFormat(locale).format(v);
      for (const u of usage.quotaUsage) {
        const row = page.getByTestId(`quota-${u.hostGroupName}`);
        const text = await row.locator('.usage-text').first().textContent();
        assert.equal(text.trim().split(/\s+/)[0], `${n(u.usedVCPUs)}/${u.vcpuLimit > 0 ? n(u.vcpuLimit) : '∞'}`);
      }
      await page.locator('.count-label', { hasText: 'virtual machines' }).waitFor();
      assert.equal(countOf(await page.locator('.count-tile .count-n').first().textContent()), tenant.virtualMachines.totalCount);
      await page.getByRole('form', { name: 'Set quota' }).waitFor();
      await ctx.screenshot(page, 'tenant-quotas');
      await page.context().close();
    },
  },
  {
    name: 'the quota form takes sizes in GiB, as the quota bars show them, and the API gets MB',
    async run(ctx) {
      const name = `e2e-quota-${Date.now()}`;
      const { createTenant: tenant } = await ctx.gql('mutation($n: String!) { createTenant(input: { name: $n }) { id } }', { n: name });
      const hg = await ctx.gql('{ hostGroups(first: 1, orderBy: { field: NAME }) { edges { node { id name } } } }');
      const group = hg.hostGroups.edges[0].node;
      const page = await ctx.page();
      await page.goto(`/tenants/${tenant.id}`);
      const form = page.getByRole('form', { name: 'Set quota' });
      await form.getByLabel('Host group').selectOption(group.id);
      await form.getByLabel('vCPUs').fill('8');
      await form.getByLabel('Memory GiB').fill('3');
      await form.getByLabel('Storage GiB').fill('40');
      await form.getByRole('button', { name: 'Save quota' }).click();
      await form.getByText('Quota saved.').waitFor();
      const usage = await ctx.gql('query($id: ID!) { quotaUsage(tenantID: $id) { hostGroupName memoryMB storageGB } }', { id: tenant.id });
      const q = usage.quotaUsage.find((u) => u.hostGroupName === group.name);
      assert.ok(q, `quota in ${group.name}`);
      assert.equal(q.memoryMB, 3072, '3 GiB typed, 3072 MB stored');
      assert.equal(q.storageGB, 40);
      await page.reload();
      const bars = page.getByTestId(`quota-${group.name}`).locator('.usage-text');
      await bars.first().waitFor();
      assert.equal((await bars.nth(1).textContent()).trim(), '0/3 GiB');
      assert.equal((await bars.nth(2).textContent()).trim(), '0/40 GiB');
      await page.context().close();
    },
  },
  {
    name: 'create an API token, use its one-time secret, revoke it in the UI and it is refused',
    async run(ctx) {
      const page = await ctx.page();
      const name = 'e2e-token-' + Date.now();
      await page.goto('/tokens');
      await page.getByRole('form', { name: 'New API token' }).getByLabel('Name').fill(name);
      await page.getByRole('button', { name: 'Create token' }).click();
      const secretBox = page.getByTestId('token-secret');
      await secretBox.waitFor();
      const secret = (await secretBox.textContent()).trim();
      assert.ok(secret.length > 16, 'a secret is shown');
      await page.getByText('it will not be shown again').waitFor();
      await page.getByTestId(`token-${name}`).waitFor();
      await ctx.screenshot(page, 'tokens');

      const ok = await callWith(ctx, secret);
      assert.equal(ok.status, 200);
      assert.ok(ok.body.data?.me?.id, 'the new token works: ' + JSON.stringify(ok.body));

      await page.getByRole('button', { name: 'Done' }).click();
      assert.equal(await page.getByTestId('token-secret').count(), 0, 'the secret is gone once dismissed');
      page.once('dialog', (d) => d.accept());
      await page.getByTestId(`token-${name}`).getByRole('button', { name: 'Revoke' }).click();
      await page.getByTestId(`token-${name}`).locator('[data-status="REVOKED"]').waitFor({ timeout: 10_000 });

      const refused = await callWith(ctx, secret);
      assert.ok(refused.status === 401 || refused.body.errors?.some((e) => e.extensions?.code === 'UNAUTHENTICATED'),
        'the revoked token is refused: ' + JSON.stringify(refused));
      assert.ok(!refused.body.data?.me, 'no data for a revoked token');
      await page.context().close();
    },
  },
];

const LIST_COUNTS = `{
  ready: computeNodes(where: { status: READY }) { totalCount }
  openCritical: alerts(where: { status: OPEN, severity: CRITICAL }) { totalCount }
  maintenances { totalCount }
  maintainers { totalCount }
  maintainerGroups { totalCount edges { node { name hosts { totalCount } } } }
  tenants { totalCount }
}`;

tests.push({
  name: 'the node, alert, maintenance, maintainer and tenant lists show what the API holds',
  async run(ctx) {
    const api = await ctx.gql(LIST_COUNTS);
    const page = await ctx.page();
    const total = async () => Number((await page.locator('.pager .muted').textContent()).match(/\d+/)[0]);

    await page.goto('/nodes?status=READY');
    await page.getByRole('table', { name: 'Nodes' }).locator('tbody tr').first().waitFor();
    assert.equal(await page.getByRole('table', { name: 'Nodes' }).locator('tbody tr').count(), Math.min(25, api.ready.totalCount));
    assert.equal(await total(), api.ready.totalCount);
    await ctx.screenshot(page, 'nodes');

    await page.goto('/alerts?severity=CRITICAL'); // newest first: the new alert heads the list
    await page.getByRole('search').waitFor();
    await page.locator('.pager .muted').waitFor();
    assert.equal(await total(), api.openCritical.totalCount);
    await ctx.screenshot(page, 'alerts');

    await page.goto('/maintenance');
    await page.locator('.pager .muted').waitFor();
    assert.equal(await total(), api.maintenances.totalCount);
    await ctx.screenshot(page, 'maintenance');

    await page.goto('/maintainers');
    await page.getByRole('table', { name: 'Maintainers' }).waitFor();
    assert.equal(await page.getByRole('table', { name: 'Maintainers' }).locator('tbody tr').count(), api.maintainers.totalCount);
    assert.equal(await page.getByRole('table', { name: 'Maintainer groups' }).locator('tbody tr').count(), api.maintainerGroups.totalCount);
    for (const e of api.maintainerGroups.edges) {
      if (e.node.hosts.totalCount > 0) await page.getByRole('row', { name: new RegExp(e.node.name) }).getByText(`Hosts (${e.node.hosts.totalCount})`).waitFor();
    }
    await ctx.screenshot(page, 'maintainers');

    await page.goto('/tenants');
    await page.getByRole('table', { name: 'Tenants' }).waitFor();
    assert.equal(await page.getByRole('table', { name: 'Tenants' }).locator('tbody tr').count(), Math.min(25, api.tenants.totalCount));
    await page.context().close();
  },
});

tests.push({
  name: 'drain a node from its page: the report lists its VMs and the progress follows the node',
  async run(ctx) {
    const found = await ctx.gql(`{ computeNodes(first: 1, where: { status: READY, schedulable: true, hasVirtualMachines: true }, orderBy: { field: NAME, direction: DESC }) {
      edges { node { id name virtualMachines { totalCount } } } } }`);
    const node = found.computeNodes.edges[0]?.node;
    assert.ok(node, 'the demo has a ready node with VMs');
    const page = await ctx.page();
    await page.goto(`/nodes/${node.id}`);
    await page.getByRole('heading', { name: node.name }).waitFor({ timeout: 20_000 }).catch(async (e) => {
      await ctx.screenshot(page, 'drain-failed');
      throw new Error(`node page did not load: ${(await page.locator('main').textContent()).slice(0, 300)}`, { cause: e });
    });
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Drain' }).click();
    const report = page.getByTestId('drain-report');
    await report.waitFor({ timeout: 15_000 });
    // every VM of the node is either moving or listed as unmovable with a reason
    const listed = await report.locator('li').count();
    assert.equal(listed, node.virtualMachines.totalCount, 'moving + unmovable = the VMs on the node');
    await page.getByTestId('drain-progress').waitFor();
    const q = `query($id: ID!) { node(id: $id) { ... on ComputeNode { schedulable drainState } } }`;
    const api = await ctx.gql(q, { id: node.id });
    assert.equal(api.node.schedulable, false);
    assert.ok(['DRAINING', 'DRAINED', 'FAILED'].includes(api.node.drainState), api.node.drainState);
    // the page follows the drain (live or by polling) to the state the API reports
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = (await ctx.gql(q, { id: node.id })).node.drainState;
      const drawn = await page.getByTestId('drain-progress').locator('[data-status]').getAttribute('data-status');
      const want = now === 'DRAINED' ? 'COMPLETED' : now;
      if (drawn === want) break;
      assert.ok(Date.now() < deadline, `drain progress shows ${drawn}, the API says ${now}`);
      await page.waitForTimeout(500);
    }
    await ctx.screenshot(page, 'drain');
    await page.getByRole('button', { name: 'Uncordon' }).click();
    await page.getByTestId('node-cordon').getByText('schedulable', { exact: true }).waitFor({ timeout: 10_000 });
    await page.context().close();
  },
});

tests.push({
  name: 'a tenant member gets every operator page without a blank page or a browser error',
  async run(ctx) {
    const users = await ctx.gql('{ users(where: { username: "alice" }) { edges { node { id } } } }');
    const alice = users.users.edges[0]?.node;
    assert.ok(alice, 'the demo has the tenant member alice');
    const made = await ctx.gql('mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }',
      { in: { name: 'e2e-alice', scope: 'READ_ONLY', userID: alice.id } });
    const page = await ctx.page({ token: made.createAPIToken.token });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const tenants = await ctx.gql('{ tenants(where: { hasMembersWith: [{ username: "alice" }] }) { edges { node { id } } } }');
    const paths = ['/', '/nodes', '/tenants', `/tenants/${tenants.tenants.edges[0].node.id}`, '/maintainers', '/alerts', '/maintenance', '/tokens'];
    for (const p of paths) {
      await page.goto(p);
      await page.locator('main h1').first().waitFor();
      // the page settles: no loading placeholder left, either content or an API problem is shown
      await page.waitForFunction(() => !document.querySelector('main .loading'), null, { timeout: 15_000 });
      const text = (await page.locator('main').textContent()).trim();
      assert.ok(text.length > 20, `${p} shows something: ${text}`);
      assert.equal(await page.getByRole('form', { name: 'Set quota' }).count(), 0, `${p}: no quota form for a tenant member`);
      if (p === '/tokens') assert.equal(await page.locator('main .problem').count(), 0, 'a member lists their own tokens');
      if (p === '/tokens') await ctx.screenshot(page, 'tokens-tenant-member');
    }
    assert.deepEqual(errors, []);
    await page.context().close();
  },
});

tests.push({
  name: 'a tenant member sees their tenant on the overview (VM counts and fatal alerts as the API has them, quotas) and no fabric sections',
  async run(ctx) {
    const found = await ctx.gql('{ users(where: { username: "alice" }) { edges { node { id } } } tenants(where: { hasMembersWith: [{ username: "alice" }] }) { edges { node { id name } } } }');
    const alice = found.users.edges[0].node;
    const tenant = found.tenants.edges[0].node;
    const made = await ctx.gql('mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }',
      { in: { name: 'e2e-alice-overview', scope: 'READ_ONLY', userID: alice.id } });
    const counts = await ctx.gql(`query($t: ID!) {
      vms: virtualMachines(where: { statusNEQ: DELETED, hasTenantWith: [{ id: $t }] }) { totalCount }
      active: virtualMachines(where: { status: ACTIVE, hasTenantWith: [{ id: $t }] }) { totalCount }
      services: regionServices(where: { statusNEQ: DELETED, hasTenantWith: [{ id: $t }] }) { totalCount }
    }`, { t: tenant.id });
    // a fatal alert on the node of one of the tenant's VMs reaches its members; a warning there does not
    const vm = await ctx.gql('query($t: ID!) { virtualMachines(first: 1, where: { status: ACTIVE, hasTenantWith: [{ id: $t }] }) { edges { node { node { id } } } } }', { t: tenant.id });
    const nodeID = vm.virtualMachines.edges[0].node.node.id;
    const fatalName = `e2e-fatal-${Date.now()}`;
    await ctx.gql('mutation($n: ID!, $name: String!) { f: createAlert(input: { name: $name, severity: FATAL, nodeID: $n }) { id } w: createAlert(input: { name: "e2e-warning", severity: WARNING, nodeID: $n }) { id } }',
      { n: nodeID, name: fatalName });
    const seen = await ctx.gql('{ alerts(where: { status: OPEN, severity: FATAL }) { totalCount } all: alerts { totalCount } }', {}, { token: made.createAPIToken.token });
    assert.ok(seen.alerts.totalCount >= 1, 'alice reads the fatal alert on her VM\'s node');
    assert.equal(seen.all.totalCount, seen.alerts.totalCount, 'a tenant member reads fatal alerts only');
    const page = await ctx.page({ token: made.createAPIToken.token });
    await page.goto('/');
    assert.equal(await tileNumber(page, 'tenant-alerts-FATAL'), seen.alerts.totalCount, 'fatal alerts tile');
    await page.getByTestId(`tenant-overview-${tenant.id}`).getByRole('link', { name: tenant.name }).waitFor();
    assert.equal(await tileNumber(page, 'tenant-vms'), counts.vms.totalCount, 'VMs of the tenant');
    assert.equal(await tileNumber(page, 'tenant-vms-ACTIVE'), counts.active.totalCount, 'active VMs');
    assert.equal(await tileNumber(page, 'tenant-services'), counts.services.totalCount, 'region services');
    await page.getByRole('table', { name: 'Quotas' }).or(page.getByText('No quotas')).first().waitFor();
    assert.equal(await page.locator('main .problem').count(), 0, 'no refusals on a tenant member\'s overview');
    const nav = page.getByRole('navigation', { name: 'Sections' });
    assert.equal(await nav.getByRole('link', { name: 'Nodes' }).count(), 0, 'no Nodes section for a tenant member');
    assert.equal(await nav.getByRole('link', { name: 'Virtual machines' }).count(), 1);
    assert.equal(await nav.getByRole('link', { name: 'Alerts' }).count(), 1, 'tenant members have the alerts they may read');
    await ctx.screenshot(page, 'overview-tenant-member');
    await page.getByTestId('tenant-alerts-FATAL').click();
    const row = page.getByRole('table', { name: 'Alerts' }).getByRole('row').filter({ hasText: fatalName });
    await row.waitFor();
    assert.match(await row.textContent(), /a node running your VMs/);
    assert.equal(await row.getByRole('button', { name: 'Resolve' }).count(), 0, 'a tenant member cannot resolve alerts');
    assert.equal(await page.locator('main .problem').count(), 0, 'the alerts page asks nothing a tenant member may not read');
    await page.goto('/');
    // the active tile opens the VM list filtered by the tenant and status, as its URL says
    await page.getByTestId('tenant-vms-ACTIVE').click();
    await page.waitForURL((u) => u.pathname === '/vms' && u.searchParams.get('status') === 'ACTIVE' && u.searchParams.get('tenant') === tenant.id);
    const status = page.getByRole('form', { name: 'Filters' }).getByLabel('Status', { exact: false }).first();
    assert.equal(await status.inputValue(), 'ACTIVE', 'the status filter follows the URL');
    // a status the list does not know is ignored, not sent to the API
    await page.goto(`/vms?status=BOGUS&tenant=${tenant.id}`);
    await page.locator('[data-vm-id]').first().waitFor();
    assert.equal(await status.inputValue(), '', 'an unknown status in the URL shows every status');
    assert.equal(await page.locator('main .problem').count(), 0, 'an unknown status in the URL is no error');
    await page.goBack();
    if (counts.active.totalCount > 0) {
      await page.locator('[data-vm-id]').first().waitFor();
      const shown = await page.locator('[data-vm-id]').allTextContents();
      assert.ok(shown.every((t) => /active/i.test(t)), `only active VMs are listed: ${shown}`);
    }
    await page.context().close();
  },
});

tests.push({
  name: 'resolve an alert from the alerts page: the server records it closed, by whom and when',
  async run(ctx) {
    const name = `e2e-resolve-${Date.now()}`;
    const made = await ctx.gql('mutation($name: String!) { createAlert(input: { name: $name, severity: CRITICAL, message: "disk failing" }) { id } }', { name });
    const id = made.createAlert.id;
    const page = await ctx.page();
    await page.goto('/alerts?severity=CRITICAL'); // newest first: the new alert heads the list
    const row = page.getByTestId(`alert-${id}`);
    await row.waitFor();
    page.once('dialog', (d) => d.accept());
    await row.getByRole('button', { name: 'Resolve' }).click();
    await row.getByText(/closed/i).first().waitFor();
    const after = await ctx.gql('query($id: ID!) { node(id: $id) { ... on Alert { status closedBy closedAt } } }', { id });
    assert.equal(after.node.status, 'CLOSED');
    assert.ok(after.node.closedBy, 'closedBy is recorded');
    assert.ok(Math.abs(Date.parse(after.node.closedAt) - Date.now()) < 120_000, `closedAt is now: ${after.node.closedAt}`);
    assert.match(await row.textContent(), new RegExp(`by ${after.node.closedBy}`), 'the row shows who closed it');
    await page.context().close();
  },
});

tests.push({
  name: 'plan a maintenance of a node from its page: listed with the node and who opened it, as the API has it',
  async run(ctx) {
    const found = await ctx.gql('{ computeNodes(first: 1, where: { schedulable: true }) { edges { node { id name } } } }');
    const node = found.computeNodes.edges[0].node;
    const title = `e2e: swap PSU ${Date.now()}`;
    const page = await ctx.page();
    await page.goto(`/nodes/${node.id}`);
    await page.getByRole('link', { name: 'Plan maintenance of this node' }).click();
    const form = page.getByRole('form', { name: 'Plan maintenance' });
    await form.getByRole('heading', { name: `Plan maintenance of ${node.name}` }).waitFor();
    // an end before the start: the API refuses it and the form says why
    await form.getByLabel('Title').fill(title);
    await form.getByLabel('Starts').fill('2031-05-06T07:00');
    await form.getByLabel('Ends').fill('2031-05-06T06:00');
    await form.getByRole('button', { name: 'Plan' }).click();
    const problem = form.locator('.problem');
    await problem.waitFor(); // the API refuses an end before the start, naming the field
    assert.match(await problem.textContent(), /VALIDATION/);
    assert.match(await problem.textContent(), /endsAt/);
    await form.getByLabel('Ends').fill('2031-05-06T09:30');
    await form.getByRole('button', { name: 'Plan' }).click();
    await page.waitForURL((u) => u.pathname === '/maintenance' && u.searchParams.has('id'));
    const id = new URL(page.url()).searchParams.get('id');
    const row = page.getByTestId(`maintenance-${id}`);
    await row.getByText(title).waitFor();
    const api = await ctx.gql('query($id: ID!) { node(id: $id) { ... on Maintenance { title status startsAt endsAt openedBy nodes { edges { node { id } } } } } }', { id });
    const m = api.node;
    assert.equal(m.title, title);
    assert.equal(m.status, 'PLANNED');
    assert.deepEqual(m.nodes.edges.map((e) => e.node.id), [node.id]);
    assert.ok(m.openedBy, 'the server records who opened it');
    const local = await page.evaluate(() => new Date(2031, 4, 6, 7, 0).toISOString());
    assert.equal(new Date(m.startsAt).toISOString(), local, 'starts when the form said, in the browser zone');
    assert.match(await row.textContent(), new RegExp(node.name));
    assert.match(await row.textContent(), new RegExp(m.openedBy));
    await ctx.screenshot(page, 'maintenance-planned');
    await page.context().close();
  },
});
