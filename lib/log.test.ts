import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { requestId } from "./http/request-id.ts";
import { accessLog, createLogger, errorFields } from "./log.ts";

const clock = () => new Date("2026-11-22T06:01:58.123Z");

describe("createLogger", () => {
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

describe("accessLog", () => {
  it("logs each request with its request id, method, path, status and duration", async () => {
    const lines: string[] = [];
    const app = new Hono();
    app.use(requestId());
    app.use(accessLog(createLogger({ sink: (l) => lines.push(l) })));
    app.get("/x", (c) => c.text("ok", 201));
    const res = await app.request("/x?secret=1", { headers: { "X-Request-Id": "trace-00000001" } });
    expect(res.status).toBe(201);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ msg: "request", request_id: "trace-00000001", method: "GET", path: "/x", status: 201 });
    expect(typeof line.duration_ms).toBe("number");
    expect(lines[0]).not.toContain("secret");
  });
});
