// Small things operators hit (issue 29, item 7): the change log's default view leaves out the
// agents' status reports; People lists people, node agents' users only when asked; a cable
// is disconnected only after a confirmation; the rack header says no "row , position 0"; the
// VM list shows addresses; the Images page's source choice sits with its radio buttons.
import assert from 'node:assert/strict';

export const tests = [
  {
    name: 'change log without agent reports leaves out reportAssignmentStatus; the checkbox brings them back',
    async run(ctx) {
      const { auditLogs } = await ctx.gql('{ auditLogs(first: 1, where: {action: "reportAssignmentStatus"}) { totalCount } }');
      assert.ok(auditLogs.totalCount > 0, 'the demo fleet reported assignment status');
      const page = await ctx.page();
      await page.goto('/changes');
      await page.getByTestId('change').first().waitFor();
      assert.equal(await page.locator('[data-testid="change"][data-action="reportAssignmentStatus"]').count(), 0);
      await page.getByLabel('agent reports').click(); // the filter may re-render it; the next load checks the result
      await page.goto('/changes?agents=1&action=reportAssignmentStatus');
      await page.locator('[data-testid="change"][data-action="reportAssignmentStatus"]').first().waitFor();
      await page.context().close();
    },
  },
  {
    name: 'People lists persons, node agents only when asked',
    async run(ctx) {
      const { users } = await ctx.gql('{ users(where: {usernameHasPrefix: "agent-node-"}) { totalCount } }');
      assert.ok(users.totalCount > 0, 'the demo fleet has agent users');
      const page = await ctx.page();
      await page.goto('/people');
      await page.locator('[data-testid="user"][data-username="alice"]').waitFor();
      assert.equal(await page.locator('[data-testid="user"][data-username^="agent-node-"]').count(), 0, 'no agent users by default');
      await page.getByLabel("show node agents' users").check();
      await page.locator('[data-testid="user"][data-username^="agent-node-"]').first().waitFor();
      await page.context().close();
    },
  },
  {
    name: 'Disconnect asks first: dismissing keeps the cable',
    async run(ctx) {
      const { links } = await ctx.gql('{ links(first: 1) { edges { node { id aPort { name host { id } } } } } }');
      const link = links.edges[0].node;
      const page = await ctx.page();
      await page.goto(`/hosts/${link.aPort.host.id}`);
      let asked = '';
      page.once('dialog', async (d) => {
        asked = d.message();
        await d.dismiss();
      });
      await page.getByRole('button', { name: `Disconnect ${link.aPort.name}`, exact: true }).click();
      await page.waitForTimeout(300);
      assert.match(asked, /^Disconnect the cable from /);
      const { node } = await ctx.gql('query($id: ID!) { node(id: $id) { id } }', { id: link.id });
      assert.ok(node, 'the cable is still there');
      await page.context().close();
    },
  },
  {
    name: 'rack header names only what the rack has; VM list shows addresses',
    async run(ctx) {
      const { createRack } = await ctx.gql(
        `mutation($in: CreateRackInput!) { createRack(input: $in) { id } }`,
        { in: { name: `e2e-bare-${Date.now().toString(36)}`, floorID: (await ctx.gql('{ floors(first: 1) { edges { node { id } } } }')).floors.edges[0].node.id } },
      );
      const page = await ctx.page();
      await page.goto(`/racks/${createRack.id}`);
      const header = page.locator('.rack-title');
      await header.waitFor();
      const text = await header.innerText();
      assert.doesNotMatch(text, /row\s*,|position 0/, text);
      await page.goto('/vms');
      await page.getByRole('columnheader', { name: 'Address' }).waitFor();
      await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="vm-address"]')].some((e) => /\d+\.\d+\.\d+\.\d+/.test(e.textContent)));
      await page.goto('/images');
      const radio = page.getByRole('group', { name: 'Source' }).getByLabel('upload a file');
      const box = await radio.boundingBox();
      const words = await page.getByRole('group', { name: 'Source' }).getByText('upload a file').boundingBox();
      assert.ok(box && words && Math.abs(box.y + box.height / 2 - (words.y + words.height / 2)) < 8, 'the radio button sits on the line of its words');
      await page.context().close();
      // The bare rack has no place on the floor plan: remove it, as the floor plan's spec
      // compares every rack of the floor with those drawn.
      await ctx.gql('mutation($id: ID!) { deleteRack(id: $id) }', { id: createRack.id });
    },
  },
];
