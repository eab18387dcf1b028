// Builds the session service's web UI (apps/sessions/ui -> apps/sessions/ui/dist) with Vite when
// the build is missing or older than a source, so `npm ci` (prepare), `npm start` and `npm test`
// all serve a current UI without a step of their own. `--force` builds regardless.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ui = fileURLToPath(new URL("../apps/sessions/ui/", import.meta.url));
const built = join(ui, "dist", "index.html");

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const builtAt = (() => {
  try {
    return statSync(built).mtimeMs;
  } catch {
    return 0;
  }
})();
const sourcesAt = Math.max(newest(join(ui, "src")), newest(join(ui, "index.html")), newest(join(ui, "vite.config.ts")));

if (process.argv.includes("--force") || builtAt < sourcesAt) {
  const started = performance.now();
  const { build } = await import("vite");
  await build({ configFile: join(ui, "vite.config.ts") });
  console.error(`sessions web UI built in ${Math.round(performance.now() - started)} ms (apps/sessions/ui/dist)`);
}
