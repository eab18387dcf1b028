import { describe, expect, it } from "vitest";
import { defaultSettings, mergeSettings, parseStoredSettings } from "./settings.ts";

describe("settings", () => {
  it("merges group by group; lists replace", () => {
    const merged = mergeSettings(defaultSettings(), { limits: { cpu_ms: 10 }, resolver: { extensions: [".cjs"] } });
    expect(merged.limits).toEqual({ ...defaultSettings().limits, cpu_ms: 10 });
    expect(merged.resolver).toEqual({ ...defaultSettings().resolver, extensions: [".cjs"] });
    expect(merged.runtime).toEqual(defaultSettings().runtime);
  });

  it("fills fields a stored document lacks with their defaults", () => {
    expect(parseStoredSettings(JSON.stringify({ limits: { cpu_ms: 7 } }))).toEqual(mergeSettings(defaultSettings(), { limits: { cpu_ms: 7 } }));
  });
});
