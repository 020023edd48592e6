// Images page: the demo's images are listed ACTIVE; a file uploaded in the browser arrives in
// chunks with progress and the image turns ACTIVE with the file's sha256.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

export const tests = [
  {
    name: 'an image uploaded on the Images page becomes ACTIVE with its checksum',
    async run(ctx) {
      const page = await ctx.page();
      await page.goto('/images');
      await page.getByRole('table', { name: 'Images' }).waitFor({ timeout: 20_000 });
      const demo = await ctx.gql('{ images(where: { status: ACTIVE }) { totalCount } }');
      assert.ok(demo.images.totalCount >= 1, 'the demo has ACTIVE images');

      // 9 MiB of raw bytes: two chunks of the page's 8 MiB.
      const bytes = Buffer.alloc(9 << 20);
      for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) & 0xff;
      const want = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
      const name = 'e2e-upload-' + Date.now();
      const form = page.getByRole('form', { name: 'New image' });
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Format').selectOption('RAW');
      await form.getByLabel('upload a file').check();
      await form.getByLabel('Image file').setInputFiles({ name: 'disk.raw', mimeType: 'application/octet-stream', buffer: bytes });
      await form.getByRole('button', { name: 'Create image' }).click();
      const row = page.getByTestId(`image-${name}`);
      await row.locator('[data-status="ACTIVE"]').waitFor({ timeout: 30_000 });
      await ctx.screenshot(page, 'images-uploaded');
      const got = await ctx.gql(`{ images(where: { name: "${name}" }) { edges { node { status sizeBytes checksum source } } } }`);
      const im = got.images.edges[0].node;
      assert.equal(im.status, 'ACTIVE');
      assert.equal(im.sizeBytes, bytes.length);
      assert.equal(im.checksum, want);
      assert.equal(im.source, 'upload');
    },
  },
];
