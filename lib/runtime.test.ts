import { describe, expect, it } from "vitest";
import { parseListenAddress, shutdownSequence } from "./runtime.ts";

describe("parseListenAddress", () => {
  it.each([
    ["127.0.0.1:5556", { hostname: "127.0.0.1", port: 5556 }],
    [":3210", { hostname: "127.0.0.1", port: 3210 }],
    ["[::1]:80", { hostname: "::1", port: 80 }],
    ["0.0.0.0:0", { hostname: "0.0.0.0", port: 0 }],
  ])("%s", (text, expected) => expect(parseListenAddress(text)).toEqual(expected));
  it.each(["5556", "host:", "host:70000", "a:b"])("refuses %s", (text) => expect(() => parseListenAddress(text)).toThrow(/invalid address/));
});

describe("shutdownSequence", () => {
  it("subscribes once, runs every hook once in order, awaiting each, then exits 0", async () => {
    const runners: (() => Promise<void>)[] = [];
    const seen: string[] = [];
    const seq = shutdownSequence(
      (run) => runners.push(run),
      (code) => seen.push(`exit ${code}`),
    );
    seq.add(async () => {
      await new Promise((r) => setTimeout(r, 5));
      seen.push("first");
    });
    seq.add(() => void seen.push("second"));
    expect(runners).toHaveLength(1);
    await Promise.all([runners[0]!(), runners[0]!()]);
    expect(seen).toEqual(["first", "second", "exit 0"]);
  });
});
