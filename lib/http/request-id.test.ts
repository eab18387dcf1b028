import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import type { ServeEnv } from "#lib/runtime";
import { requestIdOf, withRequestId } from "./request-id.ts";

function app() {
  const a = new Hono();
  a.get("/id", (c) => c.text((c.env as ServeEnv).requestId ?? "none"));
  a.get("/async", async (c) => c.text("later"));
  // Handlers that build their own Response, bypassing c.header(); one with immutable headers.
  a.get("/raw", () => new Response("raw"));
  a.get("/redirect", () => Response.redirect("http://localhost/elsewhere", 302));
  return withRequestId(a);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("withRequestId", () => {
  it("sets a fresh UUID on the response and gives it to handlers as env.requestId", async () => {
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

  it.each(["/raw", "/redirect", "/async", "/missing"])("also marks %s", async (path) => {
    const res = await app().request(path);
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });

  it("answers a synchronous handler synchronously (no Promise), so adapters can write it at once", () => {
    const res = app().fetch(new Request("http://localhost/raw"), {});
    expect(res).toBeInstanceOf(Response);
  });

  it("leaves the header to an adapter that chose the id (env.requestId) and passes that id on", async () => {
    const res = await app().fetch(new Request("http://localhost/id", { headers: { "X-Request-Id": "ignored-by-adapter" } }), {
      requestId: "chosen-by-adapter",
    });
    expect(res.headers.get("x-request-id")).toBeNull();
    expect(await res.text()).toBe("chosen-by-adapter");
  });
});

describe("requestIdOf", () => {
  it("takes the id the entry chose, whatever the request says", () => {
    const request = new Request("http://localhost/", { headers: { "X-Request-Id": "trace-from-client" } });
    expect(requestIdOf(request, { requestId: "chosen-at-entry" })).toBe("chosen-at-entry");
  });

  it("chooses by the same rule for a caller that went around the entry: a well-formed id kept, else a UUID", () => {
    expect(requestIdOf(new Request("http://localhost/", { headers: { "X-Request-Id": "trace-abc.123:4" } }), undefined)).toBe("trace-abc.123:4");
    expect(requestIdOf(new Request("http://localhost/", { headers: { "X-Request-Id": "bad id" } }), {})).toMatch(UUID);
    expect(requestIdOf(new Request("http://localhost/"), {})).toMatch(UUID);
  });
});

describe("withRequestId access log", () => {
  function logged(level?: "info" | "warn") {
    const lines: string[] = [];
    const a = new Hono();
    a.get("/x", (c) => c.text("ok", 201));
    withRequestId(a, { accessLog: createLogger({ level, sink: (l) => lines.push(l) }) });
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
