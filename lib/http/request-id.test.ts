import { Hono } from "hono";
import { describe, expect, it } from "vitest";
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
