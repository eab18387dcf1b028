/** The debug client's redirect URIs: one a GET adds per issuer origin, the most recent few kept. */
import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";

describe("GET /debug/client", () => {
  it("keeps 16 redirect URIs at most, however many origins another site's page makes it visit", async () => {
    const { app, provider } = await createIdp({ issuer: "{origin}", logger: createLogger({ level: "silent" }), sleep: async () => {} });
    const env = { clientAddress: "127.0.0.1" };
    for (let i = 0; i < 40; i++) {
      const res = await app.request(`http://g${i}.localhost:8080/debug/client`, {}, env);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get("location")!).searchParams.get("redirect_uri")).toBe(`http://g${i}.localhost:8080/debug/client`);
    }
    const uris = [...provider.clients.get("debug-client")!.redirect_uris];
    expect(uris.length).toBe(16);
    // The newest stay: a sign-in just started still comes back.
    expect(uris.at(-1)).toBe("http://g39.localhost:8080/debug/client");
    expect(uris).not.toContain("http://g0.localhost:8080/debug/client");
  });
});
