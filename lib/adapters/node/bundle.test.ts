import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { bundledEntry, forgetBundledEntry } from "./bundle.mjs";

const dir = mkdtempSync(join(tmpdir(), "node-bundle-"));
// ES modules, as in the project (tsx, the fallback, reads a package's type like Node does).
writeFileSync(join(dir, "package.json"), `{ "type": "module" }\n`);
const CACHE = fileURLToPath(new URL("../../../node_modules/.cache/entries/", import.meta.url));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  // The cache entries of these fixtures are named after their paths.
  for (const name of readdirSync(CACHE)) if (name.includes(basename(dir))) rmSync(join(CACHE, name), { force: true });
});

function write(name: string, text: string): URL {
  const path = join(dir, name);
  writeFileSync(path, text);
  return pathToFileURL(path);
}

describe("bundledEntry", () => {
  it("bundles a TypeScript entry with its imports, and rebuilds only when a source changes", async () => {
    const dep = write("dep.ts", `export const greeting: string = "hello";\n`);
    const entry = write("entry.ts", `import { greeting } from "./dep.ts";\nexport const said: string = greeting + "!";\n`);
    const first = bundledEntry(entry)!;
    expect(first.pathname).toMatch(/\/node_modules\/\.cache\/entries\/.+@[0-9a-f]{16}\.mjs$/);
    expect((await import(first.href)).said).toBe("hello!");

    // Unchanged sources: the same file, not written again.
    const written = statSync(first).mtimeMs;
    expect(bundledEntry(entry)!.href).toBe(first.href);
    expect(statSync(first).mtimeMs).toBe(written);

    // An imported source changes (its size too, so the check does not depend on mtime resolution).
    writeFileSync(fileURLToPath(dep), `export const greeting: string = "hello again";\n`);
    const second = bundledEntry(entry)!;
    expect(second.href).not.toBe(first.href);
    expect((await import(second.href)).said).toBe("hello again!");

    // Forgotten: built again although nothing changed (the same content, written anew).
    const before = statSync(second).mtimeMs;
    await new Promise((r) => setTimeout(r, 5));
    forgetBundledEntry(entry);
    expect(bundledEntry(entry)!.href).toBe(second.href);
    expect(statSync(second).mtimeMs).toBeGreaterThan(before);
  });

  it("refuses an entry whose sources use import.meta, which a bundle cannot keep", () => {
    const entry = write("meta.ts", `export const here = new URL("./x", import.meta.url).href;\n`);
    expect(bundledEntry(entry)).toBeUndefined();
    expect(bundledEntry(entry)).toBeUndefined();
  });

  it("refuses an entry that does not build", () => {
    expect(bundledEntry(write("broken.ts", `import { nothing } from "./missing.ts";\nnothing();\n`))).toBeUndefined();
  });
});

describe("node/run.mjs", () => {
  const run = (entry: URL, args: string[]) =>
    spawnSync(process.execPath, [fileURLToPath(new URL("./run.mjs", import.meta.url)), fileURLToPath(entry), ...args], { encoding: "utf8" });

  it("runs a TypeScript entry from its bundle, with the arguments as if Node had started it", () => {
    const entry = write(
      "cli.ts",
      [
        `const args: string[] = process.argv.slice(2);`,
        `const frame = new Error("here").stack!.split("\\n")[1];`,
        `console.log(JSON.stringify({ args, main: process.argv[1], frame }));`,
      ].join("\n"),
    );
    const out = run(entry, ["serve-dev", "--addr", "127.0.0.1:0"]);
    expect(out.status).toBe(0);
    expect(bundledEntry(entry)).toBeDefined();
    const printed = JSON.parse(out.stdout);
    expect(printed.args).toEqual(["serve-dev", "--addr", "127.0.0.1:0"]);
    expect(printed.main).toBe(fileURLToPath(entry));
    // Source maps are on: the trace names the TypeScript source, not the bundle.
    expect(printed.frame).toContain(`${fileURLToPath(entry)}:2:`);
  });

  it("falls back to tsx for an entry it cannot bundle", () => {
    const entry = write("meta-cli.ts", `const n: number = 2;\nconsole.log(n, new URL(".", import.meta.url).href);\n`);
    const out = run(entry, []);
    expect(out.status).toBe(0);
    expect(out.stdout.trim()).toBe(`2 ${new URL(".", entry).href}`);
  });

  it("exits with usage for anything but a .ts entry", () => {
    const out = run(new URL("file:///nowhere.js"), []);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("usage");
  });
});
