/**
 * Builds the console (console/) into dist/console/, which rankd serves at /console
 * (src/http/routes/console.ts). Preact is bundled in: nothing loads from anywhere but the server.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // JSX through esbuild, Vite's own: no Babel preset needed for Preact.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Small enough that a source map would outweigh it; the sources are in the repository.
    sourcemap: false,
  },
  logLevel: 'warn',
});
