// People and access: an admin creates a tenant from the tenants page; a tenant admin creates a
// user in their tenant and an API token for them, and sees neither the other tenant nor its
// users.
import assert from 'node:assert/strict';

const suffix = Date.now().toString(36);

export const tests = [
  {
    name: 'admin creates a tenant from the tenants page',
    async run(ctx) {
      const page = await ctx.page();
      await page.goto('/tenants');
      await page.getByRole('button', { name: 'New tenant' }).click();
      const form = page.getByRole('form', { name: 'New tenant' });
      await form.getByLabel('Name', { exact: true }).fill(`e2e-new-${suffix}`);
      await form.getByRole('button', { name: 'Create tenant' }).click();
      await page.waitForURL(/\/tenants\/\d+$/);
      const { tenants } = await ctx.gql('query($n: String!) { tenants(where: { name: $n }) { edges { node { id } } } }', { n: `e2e-new-${suffix}` });
      assert.equal(page.url().split('/').pop(), tenants.edges[0].node.id);
      await page.context().close();
    },
  },
  {
    name: 'a tenant admin creates a user and a token for their tenant and cannot see another tenant',
    async run(ctx) {
      const mk = async (name) => (await ctx.gql('mutation($in: CreateTenantInput!) { createTenant(input: $in) { id name } }', { in: { name } })).createTenant;
      const mine = await mk(`e2e-mine-${suffix}`);
      const other = await mk(`e2e-other-${suffix}`);
      const user = async (username, tenant) =>
        (await ctx.gql('mutation($in: CreateUserInput!) { createUser(input: $in) { id } }', { in: { username, tenantIDs: [tenant.id] } })).createUser;
      const admin = await user(`e2e-ta-${suffix}`, mine);
      const stranger = await user(`e2e-stranger-${suffix}`, other);
      await ctx.gql('mutation($in: GrantRoleInput!) { grantRole(input: $in) { id } }', { in: { userID: admin.id, role: 'TENANT_ADMIN', tenantID: mine.id } });
      await ctx.gql('mutation($in: GrantRoleInput!) { grantRole(input: $in) { id } }', { in: { userID: stranger.id, role: 'TENANT_MEMBER', tenantID: other.id } });
      const { createAPIToken } = await ctx.gql('mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }', {
        in: { name: 'e2e tenant admin', scope: 'READ_WRITE', userID: admin.id },
      });

      const page = await ctx.page({ token: createAPIToken.token });
      await page.goto('/people');
      await page.locator(`[data-testid="user"][data-username="e2e-ta-${suffix}"]`).waitFor();
      assert.equal(await page.locator(`[data-testid="user"][data-username="e2e-stranger-${suffix}"]`).count(), 0, 'the other tenant\'s user is hidden');

      await page.getByRole('button', { name: 'New user' }).click();
      const form = page.getByRole('form', { name: 'New user' });
      const newbie = `e2e-newbie-${suffix}`;
      await form.getByLabel('Username').fill(newbie);
      await form.getByLabel('Tenant').selectOption(mine.id);
      await form.getByLabel('Role').selectOption('TENANT_MEMBER');
      await form.getByRole('button', { name: 'Create user' }).click();
      await form.getByText(`User ${newbie} created.`).waitFor();

      const row = page.locator(`[data-testid="user"][data-username="${newbie}"]`);
      await row.getByRole('button', { name: newbie }).click();
      const panel = page.getByTestId('user-panel');
      await panel.getByTestId('role-binding').filter({ hasText: mine.name }).waitFor();
      const tok = panel.getByRole('form', { name: 'Create a token for this user' });
      await tok.getByLabel('Token name').fill('ci');
      await tok.getByLabel('Limited to tenant').selectOption(mine.id);
      await tok.getByRole('button', { name: 'Create token' }).click();
      await panel.getByTestId('new-token').waitFor();

      // the new user's token works and sees only the tenant
      const secret = await panel.getByTestId('token-secret').innerText();
      const seen = await ctx.gql('{ tenants(first: 100) { edges { node { name } } } }', {}, { token: secret.trim() });
      assert.deepEqual(seen.tenants.edges.map((e) => e.node.name), [mine.name]);

      // the tenant admin does not see the other tenant
      await page.goto('/tenants');
      await page.getByRole('link', { name: mine.name }).waitFor();
      assert.equal(await page.getByRole('link', { name: other.name }).count(), 0);
      await page.context().close();
    },
  },
];
