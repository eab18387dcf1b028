import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_SOURCE, LOADER_SOURCE, PRELUDE_SOURCE } from "./prelude.ts";

const script = fileURLToPath(new URL("../../scripts/embed-sandbox-js.mjs", import.meta.url));

describe("embedded sandbox-side JavaScript", () => {
  // The .generated.ts files are committed (every runtime imports them as they are): one that
  // lags behind its .js sources would run old code in the sandbox.
  it("is up to date with lib/sandbox/js/ (else run node scripts/embed-sandbox-js.mjs)", () => {
    expect(() => execFileSync(process.execPath, [script, "--check"], { stdio: "pipe" })).not.toThrow();
  });

  it("is compacted: no comments or type annotations reach QuickJS", () => {
    for (const text of [BOOTSTRAP_SOURCE, PRELUDE_SOURCE, LOADER_SOURCE]) {
      expect(text).not.toMatch(/\/\*\*|@ts-check|@type|@param/);
      expect(text.startsWith("(\nfunction (")).toBe(true);
    }
  });
});
