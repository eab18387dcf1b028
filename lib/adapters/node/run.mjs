// `node lib/adapters/node/run.mjs <entry.ts> [args...]`: runs a TypeScript entry on Node from its
// cached bundle (bundle.mjs), or through tsx when it cannot be bundled. The entry sees
// `process.argv` as if Node had been started on it. What `npm run idp` uses: a first /healthz in
// ~170 ms rather than ~390 ms through tsx (docs/benchmarks.md).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { bundledProcessEntry } from "./bundle.mjs";

process.argv.splice(1, 1);
if (!process.argv[1]?.endsWith(".ts")) {
  console.error("usage: node lib/adapters/node/run.mjs <entry.ts> [args...]");
  process.exit(2);
}
const entry = pathToFileURL(resolve(process.argv[1]));
const bundle = await bundledProcessEntry(entry);
if (bundle) {
  // Stack traces name the TypeScript sources (the bundle carries an inline source map).
  process.setSourceMapsEnabled(true);
  await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(entry.href);
}
