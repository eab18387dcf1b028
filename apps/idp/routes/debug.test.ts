/**
 * Who counts as loopback for `/debug/*` on Node and Deno: the socket's peer address, which the
 * runtime adapter passes as `env.clientAddress` (tests here pass it directly, as no non-loopback
 * socket can be opened on this machine). A `CF-Connecting-IP` header never overrides it. The
 * workerd rule (the header, set by the platform) is covered by test/contract/idp-debug.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import { createApp } from "../app.ts";

const app = createApp({ issuer: "http://idp.test/realms/dev", logger: createLogger({ level: "silent" }) });
const LOOPBACK = { clientAddress: "127.0.0.1" };

const DEBUG_CALLS: [string, string, string?][] = [
  ["GET", "/debug"],
  ["GET", "/debug/sessions"],
  ["GET", "/debug/codes"],
  ["GET", "/debug/tokens"],
  ["GET", "/debug/device-grants"],
  ["GET", "/debug/jwks-mode"],
  ["GET", "/debug/ui"],
  ["POST", "/debug/jwks-mode", '{"mode":"normal"}'],
  ["POST", "/debug/reset", "{}"],
  ["POST", "/debug/clock", '{"advance_seconds":60}'],
  ["POST", "/debug/scenarios", '{"login":"intruder"}'],
];

const call = (method: string, path: string, body: string | undefined, env: { clientAddress?: string }, headers: Record<string, string> = {}) =>
  app.request(`http://idp.test${path}`, { method, body, headers: { "content-type": "application/json", ...headers } }, env);

describe("debug interface: the socket address decides", () => {
  it("every debug endpoint, at the root and under the issuer path, is 403 for a non-loopback peer", async () => {
    for (const prefix of ["", "/realms/dev"]) {
      for (const [method, path, body] of DEBUG_CALLS) {
        for (const address of ["192.0.2.7", "10.0.0.1", "::ffff:192.0.2.7", "2001:db8::1"]) {
          const res = await call(method, prefix + path, body, { clientAddress: address }, { "cf-connecting-ip": "127.0.0.1" });
          expect(res.status, `${method} ${prefix}${path} from ${address}`).toBe(403);
          expect(await res.json()).toEqual({ error: "forbidden" });
        }
      }
    }
  });

  it("the debug page lists the clients and escapes what it shows", async () => {
    const res = await call("GET", "/realms/dev/debug/ui", undefined, LOOPBACK);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const page = await res.text();
    expect(page).toContain("<td>public-spa</td>");
    expect(page).toContain("<code>http://idp.test/realms/dev</code>");
  });

  it("a refused call changes nothing", async () => {
    expect((await call("POST", "/debug/jwks-mode", '{"mode":"empty"}', LOOPBACK)).status).toBe(200);
    expect((await call("POST", "/debug/reset", "{}", { clientAddress: "192.0.2.7" })).status).toBe(403);
    expect(await (await call("GET", "/debug/jwks-mode", undefined, LOOPBACK)).json()).toEqual({ mode: "empty" });
    expect(await (await app.request("http://idp.test/jwks", {}, { clientAddress: "192.0.2.7" })).json()).toEqual({ keys: [] });
    expect((await call("POST", "/debug/reset", "{}", LOOPBACK)).status).toBe(200);
  });

  it("without a socket address (workerd) the platform's CF-Connecting-IP decides, and no header is refused", async () => {
    expect((await call("GET", "/debug", undefined, {}, { "cf-connecting-ip": "127.0.0.1" })).status).toBe(200);
    expect((await call("GET", "/debug", undefined, {}, { "cf-connecting-ip": "198.51.100.4" })).status).toBe(403);
    expect((await call("GET", "/debug", undefined, {})).status).toBe(403);
  });

  it("every loopback form is served: 127.0.0.0/8, ::1 and IPv4-mapped", async () => {
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "[::1]"]) {
      const res = await call("GET", "/debug", undefined, { clientAddress: address });
      expect(res.status, address).toBe(200);
      await res.arrayBuffer();
    }
  });
});
