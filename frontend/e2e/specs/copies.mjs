// The VM page's "Snapshots & backups" section against the demo (whose simulated node agents
// copy disks in memory, and whose regions have a backup target): take a snapshot, revert the
// stopped VM to it after confirming, make an image from the stopped VM, take a backup, restore it into a new VM, clone the VM,
// delete the snapshot and the backup. Each step is checked through the API as well.
import assert from 'node:assert/strict';

/** A fresh ACTIVE VM made like one of the demo's (its tenant, region, flavor and image). */
async function freshVM(ctx, name) {
  const d = await ctx.gql(`{ virtualMachines(first: 1, where: { status: ACTIVE, hasNode: true, hasImage: true }) {
    edges { node { tenant { id } region { id } flavor { id } image { id } } } } }`);
  const like = d.virtualMachines.edges[0]?.node;
  assert.ok(like, 'the demo has an ACTIVE VM with an image');
  const vm = (await ctx.gql('mutation($i: CreateVirtualMachineInput!) { createVirtualMachine(input: $i) { id } }', {
    i: { name, tenantID: like.tenant.id, regionID: like.region.id, flavorID: like.flavor.id, imageID: like.image.id },
  })).createVirtualMachine;
  for (const t0 = Date.now(); ;) {
    const s = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { status } } }', { id: vm.id })).node.status;
    if (s === 'ACTIVE') return vm;
    assert.ok(Date.now() - t0 < 60_000, `VM ${name} still ${s}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

export const tests = [
  {
    name: 'copies: snapshot, revert after confirming, back up, restore into a new VM, clone, delete',
    async run(ctx) {
      const tag = Date.now().toString(36);
      const vm = await freshVM(ctx, `e2e-copies-${tag}`);
      const page = await ctx.page();
      await page.goto(`/vms/${vm.id}`);
      const section = page.getByRole('region', { name: 'Snapshots and backups' });
      await section.getByText('No snapshots.').waitFor();

      // Take a snapshot: PENDING, then AVAILABLE once the node's agent copied the disk.
      const t0 = Date.now();
      await section.getByLabel('Snapshot name').fill('e2e-snap');
      await section.getByRole('button', { name: 'Take snapshot' }).click();
      const snapRow = section.locator('table[aria-label="Snapshots"] tr', { hasText: 'e2e-snap' });
      await snapRow.locator('[data-status="AVAILABLE"]').waitFor({ timeout: 30_000 });
      console.log(`     snapshot AVAILABLE on the page ${Date.now() - t0} ms after the click`);

      // Reverting needs the VM stopped; then it asks for a confirmation.
      const revert = section.getByRole('button', { name: 'Revert to e2e-snap' });
      assert.equal(await revert.isDisabled(), true, 'revert is offered only for a stopped VM');
      const makeImage = section.getByRole('button', { name: 'Make image' });
      assert.equal(await makeImage.isDisabled(), true, 'an image is made only from a stopped VM');
      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await page.locator('h1 [data-status="STOPPED"]').waitFor({ timeout: 30_000 });

      // An image made from the stopped VM's disk: PENDING in the catalog, source vm:<id>, its
      // own work on the VM's node. (The demo's simulated nodes keep no disk bytes to upload:
      // the agent's upload is tested on a real guest, nodeagent's TestRestoredBackupBootsARealGuest.)
      await page.waitForFunction(() => {
        const b = [...document.querySelectorAll('button')].find((x) => x.textContent === 'Make image');
        return b && !b.disabled;
      }, null, { timeout: 30_000 });
      await section.getByLabel('Image name').fill(`e2e-image-${tag}`);
      await makeImage.click();
      await section.getByRole('status').filter({ hasText: `Image e2e-image-${tag} is PENDING` }).waitFor({ timeout: 30_000 });
      const made = (await ctx.gql('query($n: String!) { images(where: { name: $n }) { edges { node { id source format } } } }',
        { n: `e2e-image-${tag}` })).images.edges.map((e) => e.node);
      assert.equal(made.length, 1, 'the image is in the catalog');
      assert.equal(made[0].source, `vm:${vm.id}`);
      assert.equal(made[0].format, 'QCOW2');
      await page.waitForFunction(() => {
        const b = [...document.querySelectorAll('button')].find((x) => x.textContent === 'Revert to e2e-snap');
        return b && !b.disabled;
      }, null, { timeout: 30_000 });
      await revert.click();
      const confirm = section.getByRole('group', { name: 'Confirm reverting to e2e-snap' });
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      assert.equal(await confirm.count(), 0, 'cancel closes the confirmation');
      await revert.click();
      await confirm.getByRole('button', { name: 'Yes, revert' }).click();
      for (const t1 = Date.now(); ;) {
        const s = (await ctx.gql(`query($id: ID!) { node(id: $id) { ... on VirtualMachine { snapshots { edges { node { name status reverts } } } } } }`,
          { id: vm.id })).node.snapshots.edges.map((e) => e.node).find((n) => n.name === 'e2e-snap');
        if (s.status === 'AVAILABLE' && s.reverts === 1) break;
        assert.ok(Date.now() - t1 < 30_000, `after the revert the snapshot is ${s.status} with ${s.reverts} reverts`);
        await new Promise((r) => setTimeout(r, 300));
      }
      await snapRow.locator('[data-status="AVAILABLE"]').waitFor({ timeout: 30_000 });

      // A backup, then restored into a new VM (the page moves to it).
      await section.getByLabel('Backup name').fill(`e2e-backup-${tag}`);
      await section.getByRole('button', { name: 'Back up' }).click();
      const backupRow = section.locator('table[aria-label="Backups"] tr', { hasText: `e2e-backup-${tag}` });
      await backupRow.locator('[data-status="AVAILABLE"]').waitFor({ timeout: 30_000 });
      await ctx.screenshot(page, 'vm-copies');
      await section.getByRole('button', { name: `Restore e2e-backup-${tag}` }).click();
      const restoreForm = section.getByRole('form', { name: `Restore e2e-backup-${tag} into a new VM` });
      await restoreForm.getByLabel('New VM name').fill(`e2e-restored-${tag}`);
      await restoreForm.getByRole('button', { name: 'Restore' }).click();
      await page.waitForURL((u) => /\/vms\/\d+$/.test(u.pathname) && !u.pathname.endsWith(`/${vm.id}`));
      const restoredID = page.url().split('/').pop();
      await page.locator('h1 [data-status="ACTIVE"]').waitFor({ timeout: 30_000 });
      const restored = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { name restoredFrom { name } } } }', { id: restoredID })).node;
      assert.equal(restored.name, `e2e-restored-${tag}`);
      assert.equal(restored.restoredFrom?.name, `e2e-backup-${tag}`);

      // A clone of the source VM.
      await page.goto(`/vms/${vm.id}`);
      await section.getByRole('button', { name: 'Clone this VM' }).click();
      const cloneForm = section.getByRole('form', { name: 'Clone into a new VM' });
      await cloneForm.getByLabel('New VM name').fill(`e2e-clone-${tag}`);
      await cloneForm.getByRole('button', { name: 'Clone' }).click();
      await page.waitForURL((u) => /\/vms\/\d+$/.test(u.pathname) && !u.pathname.endsWith(`/${vm.id}`));
      const cloneID = page.url().split('/').pop();
      await page.locator('h1 [data-status="ACTIVE"]').waitFor({ timeout: 30_000 });
      const cloned = (await ctx.gql('query($id: ID!) { node(id: $id) { ... on VirtualMachine { restoredFrom { name } } } }', { id: cloneID })).node;
      assert.equal(cloned.restoredFrom?.name, `clone-e2e-clone-${tag}`);

      // Delete the snapshot and the backup, each after confirming.
      await page.goto(`/vms/${vm.id}`);
      await section.getByRole('button', { name: 'Delete snapshot e2e-snap' }).click();
      await section.getByRole('group', { name: 'Confirm deleting snapshot e2e-snap' }).getByRole('button', { name: 'Yes, delete' }).click();
      await section.getByText('No snapshots.').waitFor({ timeout: 30_000 });
      await section.getByRole('button', { name: `Delete backup e2e-backup-${tag}` }).click();
      await section.getByRole('group', { name: `Confirm deleting backup e2e-backup-${tag}` }).getByRole('button', { name: 'Yes, delete' }).click();
      await page.waitForFunction((n) => !document.querySelector('[data-testid="vm-copies"]')?.textContent?.includes(n), `e2e-backup-${tag}`, { timeout: 30_000 });
      const left = await ctx.gql('query($n: String!) { backups(where: { name: $n }) { totalCount } }', { n: `e2e-backup-${tag}` });
      assert.equal(left.backups.totalCount, 0);

      // Leave the demo as it was: the VMs this test made go.
      for (const id of [restoredID, cloneID, vm.id]) {
        await ctx.gql('mutation($id: ID!) { deleteVirtualMachine(id: $id) }', { id });
      }
      // The image, once its node's work on it ended (it is not deletable while assigned).
      for (const t2 = Date.now(); ;) {
        try {
          await ctx.gql('mutation($id: ID!) { deleteImage(id: $id) }', { id: made[0].id });
          break;
        } catch (e) {
          assert.ok(Date.now() - t2 < 30_000, `the image made from the VM cannot be deleted: ${e}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      await page.context().close();
    },
  },
];
