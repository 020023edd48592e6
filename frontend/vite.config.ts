// Vite builds the dashboard into dist/, which cmd/server embeds (package frontend) and serves
// at /. `npm run dev` serves it with hot reload and proxies the API to a server on :8080.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

const api = process.env.VIRTFLOW_API ?? 'http://localhost:8080';

export default defineConfig({
  plugins: [react()],
  resolve: {
    // cytoscape-elk's ELK runs in a Web Worker instead of on the main thread (see elkInWorker.ts).
    alias: [
      {
        find: /^elkjs\/lib\/elk\.bundled\.js$/,
        replacement: fileURLToPath(new URL('./src/components/network/elkInWorker.ts', import.meta.url)),
      },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    proxy: {
      '/query': { target: api, ws: true },
      '/api': api,
      '/playground': api,
    },
  },
  test: {
    environment: 'node', // the tests are of pure modules; a DOM test opts in with // @vitest-environment jsdom
    include: ['src/**/*.test.{ts,tsx}'],
  },
});
