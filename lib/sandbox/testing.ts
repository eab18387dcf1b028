/** For the sandbox tests: sandboxes on the release engine, disposed after each test. */
import { afterEach, beforeAll } from "vitest";
import { createSandbox, loadQuickJS, type Sandbox, type SandboxEngine, type SandboxOptions } from "./index.ts";

export function sandboxesPerTest(): { sandbox(options?: SandboxOptions, engine?: SandboxEngine): Sandbox; engine(): SandboxEngine } {
  let engine: SandboxEngine;
  const live: Sandbox[] = [];
  beforeAll(async () => {
    engine = await loadQuickJS();
  });
  afterEach(() => {
    for (const s of live.splice(0)) s.dispose();
  });
  return {
    sandbox(options = {}, on = engine) {
      const s = createSandbox(on, options);
      live.push(s);
      return s;
    },
    engine: () => engine,
  };
}
