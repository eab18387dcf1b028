/**
 * The repository's `package.json` `imports` map, resolved as Node resolves it: for the tests that
 * check specifiers against it (import-maps.test.ts) and follow them (import-cycles.test.ts).
 */
import { readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import { ROOT } from "./service.ts";

export type ImportMap = Record<string, string>;

export const readImportMap = (file: string): ImportMap => JSON.parse(readFileSync(join(ROOT, file), "utf8")).imports;

const packageImports = readImportMap("package.json");

/** Node's rules: an exact key, else a key with one `*` whose match replaces the target's `*`. A
 * path relative to the repository's root, or undefined when no key matches. */
export function resolvePackageImport(specifier: string): string | undefined {
  const exact = packageImports[specifier];
  if (exact !== undefined) return normalize(exact);
  for (const [key, target] of Object.entries(packageImports)) {
    const star = key.indexOf("*");
    if (star < 0) continue;
    const head = key.slice(0, star);
    const tail = key.slice(star + 1);
    if (specifier.startsWith(head) && specifier.endsWith(tail) && specifier.length >= head.length + tail.length) {
      return normalize(target.replace("*", specifier.slice(head.length, specifier.length - tail.length)));
    }
  }
  return undefined;
}
