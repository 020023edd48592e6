// End-to-end harness: builds and starts a real VirtFlow server with --demo (SQLite, in-process
// Redis, the worker and the simulated fleet in one process) on a free port, launches the
// system's headless Chromium through playwright-core, and hands each spec a context.
//
// Environment: CHROMIUM (default /usr/bin/chromium), VIRTFLOW_E2E_SERVER (a server binary
// to use instead of building ./cmd/server), VIRTFLOW_E2E_KEEP=1 keeps the data directory.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export const artifacts = join(here, 'artifacts');
export const adminToken = 'vf_e2e_admin_' + Math.random().toString(36).slice(2);

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function waitReady(url, proc, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}; see ${artifacts}/server.log`);
    try {
      const r = await fetch(url + '/readyz');
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server not ready after ${ms} ms; see ${artifacts}/server.log`);
}

/** Starts the server and the browser; returns the context specs use and a stop function. */
export async function start() {
  mkdirSync(artifacts, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'virtflow-e2e-'));
  let bin = process.env.VIRTFLOW_E2E_SERVER;
  if (!bin) {
    bin = join(work, 'virtflow-server');
    execFileSync('go', ['build', '-o', bin, './cmd/server'], { cwd: repoRoot, stdio: 'inherit' });
  }
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const log = createWriteStream(join(artifacts, 'server.log'));
  const proc = spawn(bin, ['--demo', '--addr', `127.0.0.1:${port}`, '--data-dir', join(work, 'data')], {
    cwd: work,
    env: { ...process.env, VIRTFLOW_ADMIN_TOKEN: adminToken, DATABASE_URL: '', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout.pipe(log);
  proc.stderr.pipe(log);
  const t0 = Date.now();
  await waitReady(baseURL, proc, 180_000);
  console.log(`server ready on ${baseURL} in ${Date.now() - t0} ms`);

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });

  const ctx = {
    baseURL,
    adminToken,
    browser,
    /** A GraphQL request as the admin (or as token); throws on errors unless allowErrors. */
    async gql(query, variables = {}, { token = adminToken, allowErrors = false } = {}) {
      const r = await fetch(baseURL + '/query', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = await r.json();
      if (body.errors && !allowErrors) throw new Error('GraphQL: ' + JSON.stringify(body.errors));
      return allowErrors ? body : body.data;
    },
    /** A new 1280×800 page, signed in with token (the admin's by default) unless signedIn is false. */
    async page({ token = adminToken, signedIn = true, width = 1280, height = 800 } = {}) {
      const context = await browser.newContext({ baseURL, viewport: { width, height } });
      if (signedIn) {
        await context.addInitScript((t) => localStorage.setItem('virtflow.token', t), token);
      }
      const page = await context.newPage();
      page.on('pageerror', (e) => console.error('  [browser error]', e.message));
      return page;
    },
    /** Saves a full-page screenshot as e2e/artifacts/<name>.png. */
    async screenshot(page, name) {
      const path = join(artifacts, name + '.png');
      await page.screenshot({ path, fullPage: false });
      return path;
    },
  };

  async function stop() {
    await browser.close().catch(() => {});
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
    if (!process.env.VIRTFLOW_E2E_KEEP) rmSync(work, { recursive: true, force: true });
  }
  return { ctx, stop };
}
