/**
 * The session service's web UI: `npm run build:ui` (also run by `npm ci`'s prepare step, and by
 * `npm start` / `npm test` when the sources changed) writes apps/sessions/ui/dist, which the
 * service serves at `/` and `/assets/*`. Relative URLs throughout (`base: "./"`), so the UI also
 * works under a mount prefix (the route host's /sessions/).
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    reportCompressedSize: false,
  },
});
