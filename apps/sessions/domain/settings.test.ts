import { describe, expect, it } from "vitest";
import { defaultSettings, LIMIT_MAXIMA, mergeSettings, parseStoredSettings } from "./settings.ts";

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

  it("reads a limit stored before limits had maxima as its maximum (a day for wall_ms)", () => {
    const stored = JSON.stringify({ limits: { wall_ms: 2147483647, cpu_ms: 9007199254740991, max_events: 5 } });
    expect(parseStoredSettings(stored).limits).toEqual({
      ...defaultSettings().limits,
      wall_ms: LIMIT_MAXIMA.wall_ms,
      cpu_ms: LIMIT_MAXIMA.cpu_ms,
      max_events: 5,
    });
    expect(LIMIT_MAXIMA.wall_ms + 2000).toBeLessThan(2 ** 31 - 1);
  });
});
