/**
 * Identity provider: the built-in client at /debug/client (loopback only), where the banner's login
 * link goes. It starts a code flow with PKCE, the provider's login page signs alice in, and the
 * page it comes back to shows the tokens decoded, the ID token's signature checked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALICE_SUB, type Idp, interactiveLogin, startIdp } from "./idp-helpers.ts";

let idp: Idp;
beforeAll(async () => {
  idp = await startIdp();
});
afterAll(() => idp?.svc.stop());

describe("GET /debug/client", () => {
  it("runs the code flow with PKCE and shows the tokens decoded", async () => {
    const start = await fetch(`${idp.base}/debug/client`, { redirect: "manual" });
    expect(start.status).toBe(302);
    expect(start.headers.get("cache-control")).toContain("no-store");
    const authorize = new URL(start.headers.get("location")!);
    expect(authorize.href.startsWith(`${idp.issuer}/authorize?`)).toBe(true);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: "debug-client",
      redirect_uri: `${idp.issuer}/debug/client`,
      response_type: "code",
      code_challenge_method: "S256",
    });
    const cookie = start.headers.get("set-cookie")!.split(";")[0]!;

    const { callback } = await interactiveLogin(authorize, "alice");
    expect(`${callback.origin}${callback.pathname}`).toBe(`${idp.issuer}/debug/client`);
    const shown = await fetch(callback, { headers: { cookie } });
    expect(shown.status).toBe(200);
    const text = await shown.text();
    expect(text).toContain("<h1>Signed in</h1>");
    expect(text).toContain(`<strong>alice</strong> (${ALICE_SUB}) signed in at ${idp.issuer}`);
    expect(text).toMatch(/id="verified">signature valid \(key [^)]+\), iss, aud and nonce as expected/);
    expect(text).toContain("&quot;aud&quot;: &quot;debug-client&quot;");

    // The same code again: the provider refuses it, and the page says so, with a way to start over.
    const again = await fetch(callback, { headers: { cookie } });
    expect(again.status).toBe(400);
    const refused = await again.text();
    expect(refused).toContain("The code exchange failed");
    expect(refused, idp.svc.output().slice(-3000)).toContain("invalid_grant");
    expect(refused).toContain('id="again"');
    // Without this browser's cookie the state is not its own.
    expect((await fetch(callback)).status).toBe(400);
  });
});
