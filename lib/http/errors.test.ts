import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { ApiError, apiErrorHandler, apiNotFound } from "./errors.ts";

describe("apiErrorHandler and apiNotFound", () => {
  const seen: unknown[] = [];
  const app = new Hono();
  app.onError(apiErrorHandler((err) => seen.push(err)));
  app.notFound(apiNotFound);
  app.get("/typed", () => {
    throw new ApiError(409, "SESSION_BUSY", "busy", { session_id: "s1" });
  });
  app.get("/bug", () => {
    throw new Error("secret internals");
  });

  it("turns an ApiError into its status and envelope", async () => {
    const res = await app.request("/typed");
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: { code: "SESSION_BUSY", message: "busy", details: { session_id: "s1" } } });
  });

  it("turns anything else into 500 INTERNAL without leaking the message, and reports it", async () => {
    const res = await app.request("/bug");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "INTERNAL", message: "internal error" } });
    expect(seen).toHaveLength(1);
  });

  it("answers an unknown route with 404 NOT_FOUND naming it", async () => {
    const res = await app.request("/nope", { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "NOT_FOUND", message: "no route for DELETE /nope" } });
  });
});
