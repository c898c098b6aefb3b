import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// base './' makes asset URLs relative, so the same build works when served at / and at /ui/.
export default defineConfig({
  base: './',
  plugins: [react()],
  // The API wire types (libs/contracts, types only) shared with the server and the CLI client.
  resolve: { alias: { '@app/contracts': fileURLToPath(new URL('../libs/contracts/src/index.ts', import.meta.url)) } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  server: { proxy: { '/api': 'http://127.0.0.1:14355' } },
  // Component tests (src/**/*.test.tsx, test/**/*.test.tsx) pick jsdom with a `// @vitest-environment jsdom` line.
  test: { include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'src/**/*.test.tsx'], environment: 'node', setupFiles: ['test/setup-dom.ts'] },
});
