// Builds what the npm package ships (`npm pack` runs it as `prepack`): plain JavaScript in dist/,
// so the package runs on Node without a TypeScript loader, and type declarations for its export.
//
//   dist/devservices.mjs      the `devservices` command (apps/all/entries/bin.ts)
//   dist/sessions-thread.mjs  the session service's sandbox threads
//   dist/routes-thread.mjs    the route host's handler threads
//   dist/idp-testing.mjs      `devservices/idp/testing` (startIdp), with dist/types/**.d.ts
//   dist/sessions-ui/         the session service's web UI (scripts/build-ui.mjs)
//
// Packages stay imports (the package's dependencies); our sources are bundled.
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = resolve(ROOT, "dist");
const esbuild = createRequire(import.meta.url)("esbuild");

rmSync(DIST, { recursive: true, force: true });
await esbuild.build({
  entryPoints: {
    devservices: resolve(ROOT, "apps/all/entries/bin.ts"),
    "sessions-thread": resolve(ROOT, "apps/sessions/entries/node-thread.ts"),
    "routes-thread": resolve(ROOT, "apps/routes/entries/node-thread.ts"),
    "idp-testing": resolve(ROOT, "apps/idp/testing.ts"),
  },
  outdir: DIST,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  logLevel: "warning",
});
const bin = resolve(DIST, "devservices.mjs");
writeFileSync(bin, "#!/usr/bin/env node\n" + readFileSync(bin, "utf8"));

// Declarations of the exported module and what it references; import paths end in .js so any
// TypeScript resolution finds the .d.ts files.
execFileSync(
  process.execPath,
  [
    resolve(ROOT, "node_modules/typescript/bin/tsc"),
    "--ignoreConfig",
    "--declaration",
    "--emitDeclarationOnly",
    "--rewriteRelativeImportExtensions",
    "--allowImportingTsExtensions",
    "--skipLibCheck",
    "--strict",
    "--target",
    "es2022",
    "--module",
    "esnext",
    "--moduleResolution",
    "bundler",
    "--types",
    "node",
    "--lib",
    "es2023,dom",
    "--rootDir",
    ROOT,
    "--outDir",
    resolve(DIST, "types"),
    resolve(ROOT, "apps/idp/testing.ts"),
  ],
  { stdio: "inherit" },
);
// The sources name lib/ through the repository's import map (package.json "imports": #lib/...),
// which the package does not ship: in the declarations each becomes a relative path.
const IMPORTS = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")).imports;
const TYPES = resolve(DIST, "types");
const declarationOf = (spec) => resolve(TYPES, (IMPORTS[spec] ?? IMPORTS["#lib/*"].replace("*", spec.slice("#lib/".length))).replace(/\.(ts|mjs)$/, ".js"));
(function relink(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) relink(path);
    else if (name.endsWith(".d.ts")) {
      const text = readFileSync(path, "utf8")
        .replace(/(from\s+"\.{1,2}\/[^"]*)\.ts"/g, '$1.js"')
        .replace(/(["'])(#lib\/[^"'*<>]+)\1/g, (_, quote, spec) => {
          const target = relative(dir, declarationOf(spec));
          return quote + (target.startsWith(".") ? target : `./${target}`) + quote;
        });
      writeFileSync(path, text);
    }
  }
})(TYPES);
await import("./build-ui.mjs");
cpSync(resolve(ROOT, "apps/sessions/ui/dist"), resolve(DIST, "sessions-ui"), { recursive: true });
console.log("built dist/ (devservices, threads, idp-testing and its types, the sessions web UI)");
