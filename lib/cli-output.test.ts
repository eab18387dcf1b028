import { describe, expect, it } from "vitest";
import { configSourcesLine, listenFailure, printBanner, serviceCommand, serviceLogger } from "./cli-output.ts";
import type { HostRuntime } from "./runtime.ts";

function runtime(terminal: boolean, env: Record<string, string> = {}) {
  const printed: string[] = [];
  const rt = { terminal, env, print: (line: string) => void printed.push(line) } as unknown as HostRuntime;
  return { rt, printed };
}

describe("what a service prints for a person", () => {
  it("prints the banner on a terminal, not when piped or asked for JSON", () => {
    for (
      const [terminal, env, shown] of [
        [true, {}, true],
        [false, {}, false],
        [true, { LOG_FORMAT: "json" }, false],
        [false, { LOG_FORMAT: "text" }, true],
        [true, { LOG_LEVEL: "silent" }, false],
      ] as const
    ) {
      const { rt, printed } = runtime(terminal, { NO_COLOR: "1", ...env });
      printBanner(rt, "svc  http://127.0.0.1:1", [["api", "http://127.0.0.1:1/api"], ["skipped", undefined], ["data", "file:x.db"]]);
      expect(printed.length > 0).toBe(shown);
      if (shown) expect(printed[0]).toBe("\nsvc  http://127.0.0.1:1\n  api   http://127.0.0.1:1/api\n  data  file:x.db\n");
    }
  });

  it("takes its level from LOG_LEVEL, and info for a level it does not know", () => {
    expect(serviceLogger(runtime(false).rt, "x").enabled("info")).toBe(true);
    expect(serviceLogger(runtime(false, { LOG_LEVEL: "warn" }).rt, "x").enabled("info")).toBe(false);
    expect(serviceLogger(runtime(false, { LOG_LEVEL: "nonsense" }).rt, "x").enabled("info")).toBe(true);
  });

  it("names the fields that did not keep their default, with where they came from", () => {
    expect(configSourcesLine({ name: "default", source: "default" }, { addr: "flag:--addr", issuer: "derived:addr", "client-id": "default" })).toBe(
      "profile default (default); addr from flag:--addr",
    );
    expect(configSourcesLine({ name: "ci", source: "env:IDP_PROFILE" }, { addr: "default" })).toBe("profile ci (env:IDP_PROFILE); every field its default");
  });
});

describe("hints that name commands and ports", () => {
  it("an address in use on npm start's port says npm start already serves that service there", () => {
    const inUse = new Error("listen EADDRINUSE: address already in use 127.0.0.1:5556");
    expect(listenFailure("idp", "127.0.0.1:5556", inUse)).toBe(
      "idp: cannot listen on 127.0.0.1:5556: the address is already in use (another process listens there). If `npm start` (or `npx deno task dev`) " +
        "is running, it already serves the identity provider on this port: use that one, or stop it first. To run another beside it, pick a free port: --addr 127.0.0.1:5557",
    );
    // Deno's wording; another port: no word about npm start.
    expect(listenFailure("routes", "127.0.0.1:9000", new Error("AddrInUse: Address already in use (os error 98)"))).toBe(
      "routes: cannot listen on 127.0.0.1:9000: the address is already in use (another process listens there). To run another beside it, pick a free port: --addr 127.0.0.1:9001",
    );
    expect(listenFailure("sessions", "10.0.0.1:3210", new Error("EADDRNOTAVAIL"))).toBe("sessions: cannot listen on 10.0.0.1:3210: EADDRNOTAVAIL");
  });

  it("a command is spelled for the runtime at hand", () => {
    expect(serviceCommand({ name: "node" }, "routes", "routes --script app.js")).toBe("npm run routes -- routes --script app.js");
    expect(serviceCommand({ name: "deno" }, "routes", "routes --script app.js")).toBe("npx deno task routes routes --script app.js");
  });
});
