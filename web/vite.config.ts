import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The scheduler serves the built app at /app/ on its own origin (scheduler/src/web-app/).
export default defineConfig({
  base: '/app/',
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false },
  // `npm run dev -w web`: the API is the scheduler on its usual port.
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/dev-issuer': 'http://127.0.0.1:8080' } },
});
