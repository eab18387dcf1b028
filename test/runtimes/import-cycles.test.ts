/**
 * No two modules of apps/ or lib/ import each other, directly or around a circle (type imports
 * count: a circle of types is still two modules that cannot be read one before the other).
 * `#lib/...` specifiers are followed through package.json's import map.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect, it } from "vitest";
import { resolvePackageImport } from "./package-imports.ts";
import { ROOT } from "./service.ts";

function* modules(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "testdata" && entry.name !== "js") yield* modules(path);
    } else if (/\.(ts|mts)$/.test(entry.name) && !/\.(test|d)\.m?ts$/.test(entry.name) && !entry.name.includes(".generated.")) yield path;
  }
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (specifier.startsWith(".")) return resolve(dirname(from), specifier);
  if (!specifier.startsWith("#lib/")) return undefined;
  const target = resolvePackageImport(specifier);
  return target === undefined ? undefined : resolve(ROOT, target);
}

function importGraph(): Map<string, string[]> {
  const files = [...modules(join(ROOT, "apps")), ...modules(join(ROOT, "lib"))];
  const known = new Set(files);
  const pattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']/g;
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(pattern)) {
      const target = specifier === undefined ? undefined : resolveSpecifier(file, specifier);
      if (target !== undefined && known.has(target)) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(relative(ROOT, w));
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

it("has no import circle among the modules of apps/ and lib/", () => {
  const graph = importGraph();
  expect(graph.size).toBeGreaterThan(200);
  expect(existsSync(join(ROOT, "apps/idp/domain/provider.ts"))).toBe(true);
  expect(circles(graph)).toEqual([]);
});

it("finds a circle when there is one (the check can fail)", () => {
  const a = join(ROOT, "a.ts");
  const b = join(ROOT, "b.ts");
  expect(circles(new Map([[a, [b]], [b, [a]]]))).toEqual([["a.ts", "b.ts"]]);
});
