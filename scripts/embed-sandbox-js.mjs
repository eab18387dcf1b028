#!/usr/bin/env node
/**
 * Embeds sandbox-side JavaScript (code that runs inside QuickJS, kept in real .js files so it is
 * type-checked) as string constants in committed `.generated.ts` files. Node, Deno and
 * the Worker build then import plain TypeScript: no loader, no text-import attribute, no bundler
 * step, the same on all three.
 *
 *   node scripts/embed-sandbox-js.mjs           writes every target that changed
 *   node scripts/embed-sandbox-js.mjs --check   writes nothing; exits 1 naming the stale targets
 *
 * The embedded text is compacted, line by line: comment lines, JSDoc blocks, inline
 * `/** @type {...} *\/` casts and indentation are dropped. QuickJS keeps every function's source
 * (for `toString`), so comments would cost heap in each sandbox and time at each compile (kept,
 * they made a sandbox's first evaluation ~10% slower). Being line-based, it refuses what it
 * could misread: template literals and line continuations. The result must still parse.
 *
 * A target's `bundles` are ES modules bundled by esbuild instead (npm packages included; the web
 * globals, lib/sandbox/web.ts): minified, so nothing is left to compact, and embedded as they are.
 *
 * To embed another file, add a target below; the unit test lib/sandbox/embed.test.ts runs
 * `--check` for all of them.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { buildSync } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Each target is one generated file; `constants` maps an exported name to its .js source. */
export const TARGETS = [
  {
    output: "lib/sandbox/prelude.generated.ts",
    constants: {
      BOOTSTRAP_SOURCE: "lib/sandbox/js/bootstrap.js",
      PRELUDE_SOURCE: "lib/sandbox/js/prelude.js",
      LOADER_SOURCE: "lib/sandbox/js/loader.js",
    },
  },
  {
    // The web globals (lib/sandbox/web.ts): ES modules bundled by esbuild, npm packages included.
    output: "lib/sandbox/web.generated.ts",
    bundles: {
      WEB_CORE_SOURCE: "lib/sandbox/js/web/core.js",
      WEB_URL_SOURCE: "lib/sandbox/js/web/url.js",
      WEB_IDNA_SOURCE: "lib/sandbox/js/web/idna.js",
    },
  },
  {
    output: "apps/routes/script/httpmod.generated.ts",
    constants: { HTTPMOD_SOURCE: "apps/routes/script/js/httpmod.js" },
  },
];

/** An inline JSDoc cast or parameter type, as the .js files write them: `/** @type {T} *\/ `. */
const INLINE_TYPE = /\/\*\* @type \{[^}]*\} \*\/ /g;

/** `source` without comment lines, JSDoc blocks, inline types and indentation (see above). */
export function compact(text, source = "<text>") {
  const out = [];
  let inBlock = false;
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!inBlock && line.startsWith("/*")) inBlock = true;
    if (inBlock) {
      if (!line.includes("*/")) continue;
      if (!line.endsWith("*/")) throw new Error(`${source}:${i + 1}: code after a block comment; put it on its own line`);
      inBlock = false;
      continue;
    }
    if (line === "" || line.startsWith("//")) continue;
    // A code line opening a template literal or continuing a string: what follows is not code.
    if (line.includes("`")) throw new Error(`${source}:${i + 1}: template literals are not supported (compaction is line-based)`);
    if (line.endsWith("\\")) throw new Error(`${source}:${i + 1}: line continuations are not supported`);
    out.push(line.replace(INLINE_TYPE, ""));
  }
  if (inBlock) throw new Error(`${source}: unterminated block comment`);
  const result = out.join("\n");
  new Script(result, { filename: source }); // throws a SyntaxError if compaction broke it
  return result;
}

/** A template literal whose value is exactly `text` (only `\`, backtick and `${` need escaping). */
function templateLiteral(text) {
  return "`" + text.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${") + "`";
}

/** Modules the web chunks replace (see lib/sandbox/js/web/url.js): import path -> file. */
const WEB_REPLACED = {
  "tr46": "./lib/sandbox/js/web/tr46-lazy.js",
  "@exodus/bytes/whatwg.js": "./lib/sandbox/js/web/percent-encode-utf8.js",
  "@exodus/bytes/encoding.js": "./lib/sandbox/js/web/empty.js",
};

/**
 * One chunk for the sandbox: `source` bundled by esbuild (minified: QuickJS keeps function
 * sources) as a function expression of `__web`, whose completion value is the chunk's exports.
 * The idna chunk keeps the real tr46; the others get WEB_REPLACED.
 */
function bundle(source, root) {
  const replace = source.endsWith("/idna.js") ? {} : WEB_REPLACED;
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [source],
    bundle: true,
    write: false,
    format: "iife",
    globalName: "__chunk",
    platform: "neutral",
    mainFields: ["main", "module"],
    target: "es2022",
    minify: true,
    keepNames: true, // class and function names are what the sandbox sees (\`URL.name\`, previews)
    legalComments: "none",
    charset: "ascii",
    inject: source.endsWith("/url.js") ? ["lib/sandbox/js/web/url-globals.js"] : [],
    alias: replace,
  });
  const code = result.outputFiles[0].text.trim();
  const text = `(function(__web){${code}\nreturn __chunk;})`;
  new Script(text, { filename: source });
  return text;
}

/** The generated file's text for one target (paths relative to the repository root). */
export function render(target, root = ROOT) {
  const lines = [
    "// GENERATED by scripts/embed-sandbox-js.mjs: do not edit. Edit the .js files named below,",
    "// then run `node scripts/embed-sandbox-js.mjs` (a unit test fails while this file is stale).",
  ];
  for (const [name, source] of Object.entries(target.constants ?? {})) {
    const text = compact(readFileSync(join(root, source), "utf8").replace(/\r\n/g, "\n"), source);
    lines.push("", `/** ${source}, compacted. */`, `export const ${name} = ${templateLiteral(text)};`);
  }
  for (const [name, source] of Object.entries(target.bundles ?? {})) {
    lines.push("", `/** ${source}, bundled. */`, `export const ${name} = ${templateLiteral(bundle(source, root))};`);
  }
  return lines.join("\n") + "\n";
}

/** Targets whose generated file differs from what `render` makes; writes them unless `check`. */
export function embed({ check = false, root = ROOT } = {}) {
  const stale = [];
  for (const target of TARGETS) {
    const path = join(root, target.output);
    const text = render(target, root);
    let current;
    try {
      current = readFileSync(path, "utf8");
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    stale.push(relative(root, path));
    if (!check) writeFileSync(path, text);
  }
  return stale;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes("--check");
  const stale = embed({ check });
  if (check && stale.length > 0) {
    console.error(`stale (run node scripts/embed-sandbox-js.mjs): ${stale.join(", ")}`);
    process.exit(1);
  }
  for (const path of stale) console.log(`wrote ${path}`);
}
