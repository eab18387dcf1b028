/**
 * The edge entry on a host that passes no connection info (Netlify, Vercel, a Node wrapper): the
 * caller's address is unknown there, so a `CF-Connecting-IP` the caller sent must not open the
 * loopback-only debug interface (it does on Workers, where the platform sets the header).
 */
import { expect, it } from "vitest";
import edge from "./edge.ts";

it("does not take a client's CF-Connecting-IP for its address off Workers: /debug stays closed", async () => {
  const spoofed = await edge.fetch(new Request("http://127.0.0.1/debug/sessions", { headers: { "cf-connecting-ip": "127.0.0.1" } }));
  expect(spoofed.status).toBe(403);
  const discovery = await edge.fetch(new Request("http://127.0.0.1/.well-known/openid-configuration"));
  expect(discovery.status).toBe(200);
});
