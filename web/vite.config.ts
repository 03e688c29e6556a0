import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The scheduler serves the built app at /app/ on its own origin (scheduler/src/web-app/).
export default defineConfig({
  base: '/app/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The service worker keeps the files this lists, for offline starts.
    manifest: 'asset-manifest.json',
    rollupOptions: {
      input: { app: 'index.html', sw: 'src/sw/worker.ts' },
      output: {
        // The worker keeps a fixed address (its scope is the app); everything else is hashed.
        entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  // `npm run dev -w web`: the API and the development issuer are the scheduler on its usual port.
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/dev-issuer': 'http://127.0.0.1:8080' } },
});
