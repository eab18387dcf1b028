/**
 * The route host's browser sign-in (/auth/login, /auth/callback, /auth/logout) over HTTP, on the
 * runtime of the vitest project (node, deno or workerd), serving test/contract/fixtures/routes/app.js
 * with a provider of its own, started in this process.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { freePort, type RunningService, startService } from "../runtimes/service.ts";

describe("browser sign-in (/auth/login, /auth/callback, /auth/logout)", () => {
  let site: RunningService;
  let provider: StartedIdp;
  // A database the host keeps its sessions in: a file on Node and Deno; on workerd the store's
  // Durable Object, in a storage directory a restart finds again.
  const dir = mkdtempSync(join(tmpdir(), "routes-signin-"));
  const siteOptions = (idpPort: number) => ({
    env: {
      ROUTES_SCRIPT: "test/contract/fixtures/routes/app.js",
      ROUTES_ISSUER: `http://127.0.0.1:${idpPort}`,
      ROUTES_CLIENT_ID: "site",
      ...(process.env.TEST_RUNTIME === "workerd" ? {} : { ROUTES_DB: `file:${dir}/routes.db` }),
    },
    persistTo: dir,
  });
  let idpPort: number;
  beforeAll(async () => {
    // The provider's port is chosen first, so the host knows its issuer; the host's callback is
    // known once it listens, so the provider (discovered on first use) starts after it.
    idpPort = await freePort();
    site = await startService("routes", siteOptions(idpPort));
    provider = await startIdp({
      port: idpPort,
      clients: [{ client_id: "site", redirect_uris: [`${site.baseUrl}/auth/callback`], post_logout_redirect_uris: [`${site.baseUrl}/`], require_pkce: true }],
    });
  });
  afterAll(async () => {
    await site?.stop();
    await provider?.stop();
  });

  /** The cookies a browser holds: Set-Cookie adds, Max-Age=0 removes. */
  const jarOf = (cookies: Map<string, string>, res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(";")[0]!;
      const name = pair.slice(0, pair.indexOf("="));
      if (/max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, pair.slice(name.length + 1));
    }
    return res;
  };
  const header = (cookies: Map<string, string>) => [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const at = (path: string, cookies: Map<string, string>, init: RequestInit = {}) =>
    fetch(path.startsWith("http") ? path : `${site.baseUrl}${path}`, {
      redirect: "manual",
      ...init,
      headers: { ...(init.headers as Record<string, string>), cookie: header(cookies) },
    }).then((r) => jarOf(cookies, r));

  /** /auth/login with return_to, the provider's login form as alice, back to /auth/callback. */
  async function signIn(cookies: Map<string, string>, returnTo: string): Promise<{ back: Response; callback: string }> {
    const start = await at(`/auth/login?return_to=${returnTo}`, cookies);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("location")!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${provider.issuer}/authorize`);
    const login = await fetch(`${provider.url}/authorize`, {
      method: "POST",
      body: new URLSearchParams([...authorize.searchParams, ["login", "alice"]]),
      redirect: "manual",
    });
    const callback = login.headers.get("location")!;
    expect(callback.startsWith(`${site.baseUrl}/auth/callback?`)).toBe(true);
    return { back: await at(callback, cookies), callback };
  }

  it("sends a page request to sign in, signs the user in with the code flow and PKCE, and back", async () => {
    const page = await fetch(`${site.baseUrl}/me`, { headers: { accept: "text/html" }, redirect: "manual" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/auth/login?return_to=%2Fme");
    const cookies = new Map<string, string>();
    const { back, callback } = await signIn(cookies, "%2Fme");
    expect(back.status).toBe(302);
    expect(back.headers.get("location")).toBe("/me");
    // The scope authorizer: the ID token of alice grants no notes:read, so the route says 403.
    expect((await at("/me", cookies)).status).toBe(403);
    expect((await at(callback, cookies)).status).toBe(400);
    const out = await at("/auth/logout", cookies);
    expect(new URL(out.headers.get("location")!).pathname).toBe("/end-session");
    expect((await at("/me", cookies)).status).toBe(401);
  });

  it.each([
    "%2F%09%2Fevil.example%2Fx",
    "%2F%0A%2Fevil.example%2Fx",
    "%2F%0D%2Fevil.example%2Fx",
    "%2F%5Cevil.example",
    "%2F.%2F%2Fevil.example",
    "https%3A%2F%2Fevil.example%2F",
    "%2F%2Fevil.example",
  ])(
    "sends return_to=%s home: the callback redirects to /, never off-site or 500",
    async (returnTo) => {
      const { back } = await signIn(new Map(), returnTo);
      expect(back.status).toBe(302);
      expect(back.headers.get("location")).toBe("/");
    },
  );

  it("issues a fresh session id at sign-in and at sign-out: a planted session is never signed in", async () => {
    const attacker = new Map<string, string>();
    await at("/echo/1", attacker); // a session cookie of the attacker's own
    const victim = new Map([["routes_session", attacker.get("routes_session")!]]);
    await signIn(victim, "%2F");
    expect(victim.get("routes_session")).not.toBe(attacker.get("routes_session"));
    const signedIn = victim.get("routes_session");
    expect((await at("/me", victim)).status).toBe(403); // signed in (alice lacks notes:read)
    expect((await at("/me", attacker)).status).toBe(401);
    await at("/auth/logout", victim);
    expect(victim.get("routes_session")).not.toBe(signedIn);
    expect((await at("/me", new Map([["routes_session", signedIn!]]))).status).toBe(401);
  });

  it("signs out only on a request from this site: another site's link or form gets a page with a button", async () => {
    const cookies = new Map<string, string>();
    await signIn(cookies, "%2F");
    const signedIn = cookies.get("routes_session");
    for (const headers of [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }]) {
      const page = await at("/auth/logout", cookies, { headers });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form method="post" action="/auth/logout">');
    }
    const forged = await at("/auth/logout", cookies, { method: "POST", headers: { origin: "https://evil.example" } });
    expect(forged.status).toBe(200);
    expect(cookies.get("routes_session")).toBe(signedIn);
    expect((await at("/me", cookies)).status).toBe(403); // still signed in
    const mine = await at("/auth/logout", cookies, { method: "POST", headers: { origin: site.baseUrl, "sec-fetch-site": "same-origin" } });
    expect(mine.status).toBe(302);
    expect((await at("/me", cookies)).status).toBe(401);
  });

  it("keeps signed-in sessions across a restart when the host has a database", async () => {
    const cookies = new Map<string, string>();
    await signIn(cookies, "%2F");
    expect((await at("/me", cookies)).status).toBe(403);
    await site.stop();
    site = await startService("routes", siteOptions(idpPort));
    expect((await at("/me", cookies)).status).toBe(403);
  });
});
