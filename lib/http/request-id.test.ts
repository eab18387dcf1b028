import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createLogger } from "../log.ts";
import { requestId } from "./request-id.ts";

function app() {
  const a = new Hono<{ Variables: { requestId: string } }>();
  a.use(requestId());
  a.get("/id", (c) => c.text(c.get("requestId")));
  // A handler that builds its own Response, bypassing c.header().
  a.get("/raw", () => new Response("raw"));
  return a;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("requestId middleware", () => {
  it("sets a fresh UUID on the response and in the context", async () => {
    const res = await app().request("/id");
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(UUID);
    expect(await res.text()).toBe(id);
  });

  it("echoes a well-formed incoming id", async () => {
    const res = await app().request("/id", { headers: { "X-Request-Id": "trace-abc.123:4" } });
    expect(res.headers.get("x-request-id")).toBe("trace-abc.123:4");
  });

  it.each(["short", "has space 12345", "x".repeat(129), "<script>alert(1)</script>"])("replaces the malformed id %j", async (bad) => {
    const res = await app().request("/id", { headers: { "X-Request-Id": bad } });
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });

  it("also marks responses that handlers build themselves", async () => {
    const res = await app().request("/raw");
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });
});

describe("requestId access log", () => {
  function logged(level?: "info" | "warn") {
    const lines: string[] = [];
    const a = new Hono();
    a.use(requestId({ accessLog: createLogger({ level, sink: (l) => lines.push(l) }) }));
    a.get("/x", (c) => c.text("ok", 201));
    return { a, lines };
  }

  it("logs each request with its request id, method, path, status and duration", async () => {
    const { a, lines } = logged();
    const res = await a.request("/x?secret=1", { headers: { "X-Request-Id": "trace-00000001" } });
    expect(res.status).toBe(201);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: "info", msg: "request", request_id: "trace-00000001", method: "GET", path: "/x", status: 201 });
    expect(typeof line.duration_ms).toBe("number");
    expect(lines[0]).not.toContain("secret");
  });

  it("writes nothing below its logger's level, and still sets the header", async () => {
    const { a, lines } = logged("warn");
    const res = await a.request("/x");
    expect(res.headers.get("x-request-id")).toMatch(UUID);
    expect(lines).toEqual([]);
  });
});
