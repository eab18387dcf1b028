import { describe, expect, it } from "vitest";
import { createLogger, errorFields } from "./log.ts";

const clock = () => new Date("2026-11-22T06:01:58.123Z");

describe("createLogger", () => {
  it("says which levels it writes", () => {
    const log = createLogger({ level: "warn", sink: () => {} });
    expect([log.enabled("debug"), log.enabled("info"), log.enabled("warn"), log.enabled("error")]).toEqual([false, false, true, true]);
    expect(createLogger({ level: "silent" }).enabled("error")).toBe(false);
  });

  it("writes one JSON object a line with time, level, message and fields", () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (l) => lines.push(l), now: clock, fields: { service: "x" } });
    log.info("hello", { n: 1 });
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ ts: "2026-11-22T06:01:58.123Z", level: "info", msg: "hello", service: "x", n: 1 }]);
  });

  it("drops lines below the level, and everything when silent", () => {
    const lines: string[] = [];
    const warn = createLogger({ sink: (l) => lines.push(l), level: "warn" });
    warn.debug("a");
    warn.info("b");
    warn.warn("c");
    warn.error("d");
    createLogger({ sink: (l) => lines.push(l), level: "silent" }).error("e");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["c", "d"]);
  });

  it("child loggers add fields without changing the parent", () => {
    const lines: string[] = [];
    const parent = createLogger({ sink: (l) => lines.push(l), now: clock, fields: { a: 1 } });
    parent.child({ b: 2 }).info("child");
    parent.info("parent");
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { msg: "child", a: 1, b: 2 },
      { msg: "parent", a: 1 },
    ]);
    expect(JSON.parse(lines[1]!)).not.toHaveProperty("b");
  });

  it("errorFields describes errors and other thrown values", () => {
    expect(errorFields(new Error("boom"))).toMatchObject({ error: "boom", stack: expect.stringContaining("boom") });
    expect(errorFields("text")).toEqual({ error: "text" });
  });
});

describe("text lines", () => {
  it("puts time, level, service and message first, then the fields as key=value", () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (l) => lines.push(l), now: clock, fields: { service: "idp" }, format: "text" });
    log.warn("slow request", { path: "/token", ms: 12.5, note: "two words", gone: undefined });
    expect(lines).toEqual(['06:01:58.123 WARN  idp  slow request  path=/token ms=12.5 note="two words"']);
  });

  it("colours the level only when asked", () => {
    const lines: string[] = [];
    createLogger({ sink: (l) => lines.push(l), now: clock, format: "text", color: true }).error("boom");
    expect(lines[0]).toBe("\x1b[90m06:01:58.123\x1b[0m \x1b[31mERROR\x1b[0m  boom");
  });
});
