// Sign-in: the token form, a rejected token, and the password form.
import assert from 'node:assert/strict';

export const tests = [
  {
    name: 'a signed-out visitor is sent to the login page; a bad token is refused with a message',
    async run(ctx) {
      const page = await ctx.page({ signedIn: false });
      await page.goto('/racks/1');
      await page.waitForURL('**/login');
      await page.getByRole('tab', { name: 'API token' }).click();
      await page.getByLabel('API token').fill('vf_not_a_real_token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText('rejected').waitFor();
      await page.context().close();
    },
  },
  {
    name: 'sign in with the admin token, then with a password set through the API',
    async run(ctx) {
      const page = await ctx.page({ signedIn: false });
      await page.goto('/');
      await page.getByRole('tab', { name: 'API token' }).click();
      await page.getByLabel('API token').fill(ctx.adminToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Sections' }).getByText('Sign out').waitFor();
      assert.ok(!page.url().includes('/login'));

      const me = await ctx.gql('{ me { id username } }');
      await ctx.gql('mutation($id: ID!) { setUserPassword(id: $id, password: "e2e-correct-horse") { id } }', { id: me.me.id });
      await page.getByText('Sign out').click();
      await page.waitForURL('**/login');
      await page.getByLabel('Username').fill(me.me.username);
      await page.getByLabel('Password').fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('Password').fill('e2e-correct-horse');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Sections' }).waitFor();
      await ctx.screenshot(page, 'overview');
      await page.context().close();
    },
  },
];
