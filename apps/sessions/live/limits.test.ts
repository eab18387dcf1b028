import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { SettingsPatchBody } from "../routes/schemas.ts";
import { defaultLimits, LIMIT_MAXIMA, LIMIT_NAMES, limitWording, reportedLimit, sandboxLimits, SESSION_LIMITS, stoppedWording } from "./limits.ts";

describe("the limits table", () => {
  it("gives the spec's defaults and the maxima, in the table's order", () => {
    expect(defaultLimits()).toEqual({ cpu_ms: 5000, wall_ms: 30000, mem_mb: 128, max_events: 1000, max_output_kb: 512 });
    expect(Object.keys(defaultLimits())).toEqual(LIMIT_NAMES);
    expect(LIMIT_MAXIMA).toEqual({ cpu_ms: 86_400_000, wall_ms: 86_400_000, mem_mb: 1024, max_events: 1_000_000, max_output_kb: 1_048_576 });
    for (const name of LIMIT_NAMES) expect(SESSION_LIMITS[name].default).toBeLessThanOrEqual(LIMIT_MAXIMA[name]);
  });

  it("sets the sandbox's limits in the sandbox's units", () => {
    expect(sandboxLimits({ cpu_ms: 1, wall_ms: 2, mem_mb: 3, max_events: 4, max_output_kb: 5 })).toEqual({
      cpuMs: 1,
      wallMs: 2,
      memMb: 3,
      maxEvents: 4,
      maxOutputBytes: 5 * 1024,
    });
  });

  it("names a limit the sandbox reported as the outcome does, and words it for the execution's error", () => {
    expect(["cpu_ms", "wall_ms", "max_events", "max_output_bytes", "memory"].map((n) => reportedLimit(n as never))).toEqual([
      "cpu_ms",
      "wall_ms",
      "max_events",
      "max_output_kb",
      "memory",
    ]);
    expect(limitWording("memory")).toBe("mem_mb (memory)");
    expect(limitWording("max_output_kb")).toBe("max_output_kb (output size)");
    expect(limitWording("something else")).toBe("something else");
  });

  it("says why a run stopped early, falling back to cpu_ms and max_events when the sandbox named none", () => {
    const limits = defaultLimits();
    expect(stoppedWording("timeout", "wall_ms", limits)).toBe("timed out (wall_ms limit of 30000 ms)");
    expect(stoppedWording("timeout", undefined, limits)).toBe("timed out (cpu_ms limit of 5000 ms)");
    expect(stoppedWording("limit_exceeded", "max_output_bytes", limits)).toBe("output limit exceeded (max_output_kb 512)");
    expect(stoppedWording("limit_exceeded", undefined, limits)).toBe("event limit exceeded (max_events 1000)");
  });

  it("bounds each limit in the request schema by its maximum", () => {
    for (const name of LIMIT_NAMES) {
      const at = (value: number) => v.safeParse(SettingsPatchBody, { limits: { [name]: value } });
      expect(at(LIMIT_MAXIMA[name]).success).toBe(true);
      expect(at(LIMIT_MAXIMA[name] + 1).issues?.[0]?.message).toBe(`must be at most ${LIMIT_MAXIMA[name]}`);
      expect(at(0).issues?.[0]?.message).toBe("must be a positive integer");
    }
  });
});
