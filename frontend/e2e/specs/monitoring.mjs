// Monitoring pages: an operator creates and edits an event rule, sees an event it acts on in the
// event stream and the alert it raised, acknowledges the alert and silences its node from it,
// expires the silence, and finds a hook delivery with its attempts in the delivery history.
import assert from 'node:assert/strict';

const stamp = Date.now().toString(36);

export const tests = [
  {
    name: 'rules, events, alerts with acknowledge and silence, silences and deliveries',
    async run(ctx) {
      const page = await ctx.page();
      const check = `e2e-disk-${stamp}`;
      const rule = `e2e-rule-${stamp}`;

      // A rule, created and then edited on the rules page.
      await page.goto('/rules');
      const form = page.getByRole('form', { name: 'New rule' });
      await form.getByLabel('Name').fill(rule);
      await form.getByLabel('Check pattern').fill(check);
      await form.getByLabel('Alert severity').selectOption('CRITICAL');
      await form.getByRole('button', { name: 'Create rule' }).click();
      const row = page.getByTestId(`rule-${rule}`);
      await row.waitFor();
      await row.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('form', { name: 'Edit rule' });
      await edit.getByLabel('Priority').fill('42');
      await edit.getByRole('button', { name: 'Save rule' }).click();
      await row.getByText('#42').waitFor();
      const api = await ctx.gql(`query($n: String!) { eventRules(where: {name: $n}) { edges { node { priority action checkNamePattern } } } }`, { n: rule });
      assert.deepEqual(api.eventRules.edges[0].node, { priority: 42, action: 'CREATE_ALERT', checkNamePattern: check });

      // A hook rule to localhost (a name: stored, then refused by the egress policy when
      // dialled): its delivery fails and is kept with its attempts.
      await ctx.gql(`mutation($n: String!, $c: String!) { createEventRule(input: {name: $n, kind: ACTION, action: CALL_HOOK,
        checkNamePattern: $c, hookURL: "http://localhost:9/hook"}) { id } }`, { n: `${rule}-hook`, c: check });

      // An event on a node: the stream shows it, and the rule raises an alert.
      const nodes = await ctx.gql('{ computeNodes(first: 1) { edges { node { id name } } } }');
      const node = nodes.computeNodes.edges[0].node;
      await ctx.gql(`mutation($n: ID!, $c: String!) { reportEvents(input: [{nodeID: $n, checkName: $c, status: CRITICAL, output: "disk 97% full"}]) { id } }`,
        { n: node.id, c: check });
      await page.goto(`/events?check=${check}`);
      const ev = page.getByRole('table', { name: 'Events' }).locator('tbody tr').first();
      await ev.getByText(check, { exact: true }).waitFor();
      await ev.getByText(/alert \d+ raised/).waitFor({ timeout: 20_000 });

      await page.goto('/alerts?status=OPEN');
      const alertRow = page.locator('tbody tr', { hasText: `${check} on ` }).first(); // the name may be cut at 128 characters
      await alertRow.waitFor({ timeout: 20_000 });
      await alertRow.getByRole('button', { name: 'Acknowledge' }).click();
      await alertRow.getByText(/acknowledged by/).waitFor();

      // Silence the node from the alert: the form comes prefilled.
      await alertRow.getByRole('link', { name: 'Silence' }).click();
      const sform = page.getByRole('form', { name: 'New silence' });
      assert.equal(await sform.getByLabel('Node pattern').inputValue(), node.name);
      await sform.getByLabel('Comment').fill(`e2e ${stamp}`);
      await sform.getByRole('button', { name: 'Create silence' }).click();
      const srow = page.locator('tbody tr', { hasText: `e2e ${stamp}` });
      await srow.getByText('active').waitFor();
      page.once('dialog', (d) => d.accept());
      await srow.getByRole('button', { name: 'Expire' }).click();
      await srow.getByText('ended').waitFor();

      // The delivery history has the hook rule's delivery.
      await page.goto('/deliveries');
      await page.locator('tbody tr', { hasText: `rule ${rule}-hook` }).first().waitFor({ timeout: 20_000 });
      await page.context().close();
    },
  },
];
