/**
 * The two import maps, `package.json` `imports` (Node, tsx, vitest, esbuild, TypeScript) and
 * `deno.json` `imports` (Deno, which takes no `*` patterns, so every specifier is listed), are kept
 * by hand. Every `#lib/` and `#test/` specifier the code imports must resolve through both, to the
 * same existing file; and no Deno entry may point anywhere the Node map does not.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { readImportMap, resolvePackageImport as resolveNode } from "./package-imports.ts";
import { ROOT } from "./service.ts";

const nodeMap = readImportMap("package.json");
const denoMap = readImportMap("deno.json");

/** Deno's rules (import maps): an exact key, else the longest key ending in `/` that prefixes it. */
function resolveDeno(specifier: string): string | undefined {
  const exact = denoMap[specifier];
  if (exact !== undefined) return normalize(exact);
  const [prefix, target] = Object.entries(denoMap)
    .filter(([key]) => key.endsWith("/") && specifier.startsWith(key))
    .sort(([a], [b]) => b.length - a.length)[0] ?? [];
  return prefix === undefined || target === undefined ? undefined : normalize(target + specifier.slice(prefix.length));
}

const SOURCE_DIRS = ["apps", "lib", "test", "bench", "examples", "scripts"];
const SOURCE = /\.(ts|mts|mjs|js)$/;

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (SOURCE.test(entry.name) && !entry.name.includes(".generated.")) yield path;
  }
}

/** Every `#lib/...` / `#test/...` module specifier in an import or export, static or dynamic. */
function importedSpecifiers(): Map<string, string> {
  const found = new Map<string, string>();
  const pattern = /(?:from\s+|import\s*\(\s*|import\s+)["'](#(?:lib|test)\/[^"']+)["']/g;
  for (const dir of SOURCE_DIRS) {
    if (!existsSync(join(ROOT, dir))) continue;
    for (const file of sourceFiles(dir)) {
      for (const [, specifier] of readFileSync(join(ROOT, file), "utf8").matchAll(pattern)) {
        if (specifier !== undefined && !found.has(specifier)) found.set(specifier, file);
      }
    }
  }
  return found;
}

describe("import maps (package.json and deno.json)", () => {
  const specifiers = importedSpecifiers();

  it("finds the specifiers the code imports", () => {
    expect(specifiers.size).toBeGreaterThan(10);
    expect([...specifiers.keys()]).toContain("#lib/http");
  });

  it("resolves every imported specifier to the same existing file in both maps", () => {
    const problems: string[] = [];
    for (const [specifier, file] of specifiers) {
      const node = resolveNode(specifier);
      const deno = resolveDeno(specifier);
      if (node === undefined || !existsSync(join(ROOT, node))) problems.push(`${specifier} (${file}): package.json gives ${node}`);
      if (deno === undefined) problems.push(`${specifier} (${file}): not in deno.json`);
      else if (deno !== node) problems.push(`${specifier} (${file}): deno.json gives ${deno}, package.json ${node}`);
    }
    expect(problems).toEqual([]);
  });

  it("has no deno.json entry that the package.json map resolves elsewhere", () => {
    const problems: string[] = [];
    for (const [key, target] of Object.entries(denoMap)) {
      if (!key.startsWith("#")) continue;
      if (key.endsWith("/")) {
        if (nodeMap[`${key}*`] !== `${target}*`) problems.push(`${key} → ${target}: package.json has ${nodeMap[`${key}*`]}`);
        continue;
      }
      const node = resolveNode(key);
      if (node !== normalize(target)) problems.push(`${key} → ${target}: package.json gives ${node}`);
      if (!existsSync(join(ROOT, target))) problems.push(`${key} → ${target}: no such file`);
    }
    expect(problems).toEqual([]);
  });
});
