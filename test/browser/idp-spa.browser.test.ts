/**
 * A single-page app on another origin uses the identity provider with a stock browser library, in
 * headless Chromium, on Node, Deno and workerd: the app (on `http://localhost:<port>`) signs in
 * with oidc-client-ts (code + PKCE) at the provider (on `http://127.0.0.1:<port>`), reads userinfo,
 * refreshes with its refresh token, and signs out (revoking its tokens, then RP-initiated logout
 * back to a registered post-logout URI). Every call the library makes from the page is a
 * cross-origin fetch, so each step needs the provider's CORS answers; the browser's console shows
 * whether one was blocked.
 *
 * The app is a tiny page served by a loopback server of the test; oidc-client-ts (a devDependency)
 * is bundled for it with esbuild into a temporary directory when the suite starts.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { ROOT, type RunningService, type RuntimeName, startService } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

/** `sub` of the synthetic user `alice` (docs/idp.md#users-and-scenarios). */
const ALICE_SUB = "user-NfTfZYYJ1idFA58J4RDISA";
const RUNTIMES: RuntimeName[] = ["node", "deno", "workerd"];
/** How long a page may take to show an answer (a loaded CI machine, a Durable Object's first start). */
const SOON = { timeout: 10_000 };

let browser: Browser;
let bundleDir: string;
let library: string;

/** The browser library, bundled as a script that sets `window.oidc`. */
async function bundleLibrary(): Promise<string> {
  bundleDir = mkdtempSync(join(tmpdir(), "idp-spa-"));
  const outfile = join(bundleDir, "oidc.js");
  await build({
    stdin: { contents: 'export { UserManager, WebStorageStateStore } from "oidc-client-ts";', resolveDir: ROOT, sourcefile: "spa-library.js" },
    bundle: true,
    format: "iife",
    globalName: "oidc",
    platform: "browser",
    target: "es2022",
    outfile,
    logLevel: "silent",
  });
  return readFileSync(outfile, "utf8");
}

/**
 * The app: every page of it is the same document. It finishes a sign-in on /callback, and offers
 * the test `window.app` (sign in, read userinfo, refresh, fetch the key set, sign out). The status
 * line says where it is; errors go to #error.
 */
const APP = `
const { UserManager, WebStorageStateStore } = window.oidc;
const config = window.SPA_CONFIG;
const manager = new UserManager({
  ...config,
  response_type: "code",
  scope: "openid profile email offline_access",
  loadUserInfo: true,
  revokeTokensOnSignout: true,
  automaticSilentRenew: false,
  userStore: new WebStorageStateStore({ store: window.localStorage }),
});
const $ = (id) => document.getElementById(id);
const show = (status, user) => {
  $("status").textContent = status;
  $("profile").textContent = user ? JSON.stringify(user.profile) : "";
};
const metadata = () => manager.metadataService.getMetadata();
window.app = {
  signIn: () => manager.signinRedirect(),
  user: async () => {
    const user = await manager.getUser();
    return user && { profile: user.profile, access_token: user.access_token, refresh_token: user.refresh_token, id_token: user.id_token };
  },
  userinfo: async () => {
    const user = await manager.getUser();
    const res = await fetch((await metadata()).userinfo_endpoint, { headers: { authorization: "Bearer " + user.access_token } });
    return { status: res.status, body: await res.json() };
  },
  refresh: async () => {
    const user = await manager.signinSilent();
    show("refreshed", user);
    return { access_token: user.access_token, refresh_token: user.refresh_token };
  },
  keys: async () => (await (await fetch((await metadata()).jwks_uri)).json()).keys.map((k) => k.kid),
  signOut: () => manager.signoutRedirect(),
};
(async () => {
  try {
    if (location.pathname === "/callback") {
      const user = await manager.signinRedirectCallback();
      history.replaceState(null, "", "/");
      show("signed-in", user);
      return;
    }
    const user = await manager.getUser();
    show(user ? "signed-in" : "signed-out", user);
  } catch (err) {
    $("error").textContent = String(err && err.message || err);
    show("failed");
  }
})();
`;

function appPage(config: Record<string, string>): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SPA</title></head>
<body><h1>A single-page app</h1>
<p id="status">loading</p><pre id="profile"></pre><p id="error"></p>
<script>window.SPA_CONFIG = ${JSON.stringify(config)};</script>
<script src="/oidc.js"></script>
<script src="/app.js"></script>
</body></html>`;
}

interface Spa {
  server: Server;
  origin: string;
  config: Record<string, string>;
}

/** The app's own loopback server: a different port, and the host name localhost, from the provider. */
async function startSpa(): Promise<Spa> {
  const spa = { config: {} } as Spa;
  spa.server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/oidc.js" || path === "/app.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(path === "/oidc.js" ? library : APP);
    } else if (path === "/" || path === "/callback" || path === "/index.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(appPage(spa.config));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => spa.server.listen(0, "127.0.0.1", resolve));
  spa.origin = `http://localhost:${(spa.server.address() as AddressInfo).port}`;
  return spa;
}

beforeAll(async () => {
  library = await bundleLibrary();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
});

describe.each(RUNTIMES)("a single-page app with oidc-client-ts, against the provider on %s", (runtime) => {
  let idp: RunningService;
  let spa: Spa;
  let context: BrowserContext;
  let page: Page;
  /** What the browser's console said: a blocked cross-origin request shows up here. */
  let console: string[];

  beforeAll(async () => {
    spa = await startSpa();
    idp = await startService(
      "idp",
      {
        env: {
          IDP_ISSUER: "{origin}",
          IDP_CLIENT_ID: "public-spa",
          IDP_REDIRECT_URIS: `${spa.origin}/callback`,
          // The app comes back to its start page after logout, as oidc-client-ts apps usually do.
          IDP_POST_LOGOUT_REDIRECT_URIS: `${spa.origin}/`,
        },
      },
      runtime,
    );
  }, 120_000);
  afterAll(async () => {
    await idp?.stop();
    await new Promise((done) => spa?.server.close(done));
  });

  beforeEach(async () => {
    context = await browser.newContext();
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    console = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") console.push(message.text());
    });
    page.on("pageerror", (err) => console.push(err.message));
  });
  afterEach(() => context.close());

  const status = () => page.locator("#status").textContent();
  const app = <T>(call: string) => page.evaluate(`window.app.${call}`) as Promise<T>;
  /** Starts a call that navigates away (its result would be lost with the page). */
  const leave = (call: string) => page.evaluate(`void window.app.${call}`);

  /** Opens the app and signs in as alice at the provider's login page, with extra claims. */
  async function signIn(responseMode?: "query" | "fragment"): Promise<void> {
    spa.config = {
      authority: idp.baseUrl,
      client_id: "public-spa",
      redirect_uri: `${spa.origin}/callback`,
      post_logout_redirect_uri: `${spa.origin}/`,
      ...(responseMode ? { response_mode: responseMode } : {}),
    };
    await page.goto(`${spa.origin}/`);
    await expect.poll(status, SOON).toBe("signed-out");
    await Promise.all([page.waitForURL(`${idp.baseUrl}/authorize?**`), leave("signIn()")]);
    await page.click("#extra-claims-section summary");
    await page.fill("#extra-claims", '{"roles": ["spa-tester"]}');
    await page.click('button[data-login="alice"]');
    await page.waitForURL(`${spa.origin}/`);
    await expect.poll(status, SOON).toBe("signed-in");
    expect(await page.locator("#error").textContent()).toBe("");
  }

  test("signs in, reads userinfo, refreshes with its refresh token and signs out", async () => {
    await signIn();
    const user = (await app<{ profile: Record<string, unknown>; access_token: string; refresh_token: string }>("user()"))!;
    // The profile: ID token claims merged with what the library read from userinfo.
    expect(user.profile).toMatchObject({ sub: ALICE_SUB, email: "alice@example.test", roles: ["spa-tester"], iss: idp.baseUrl, aud: "public-spa" });
    expect(user.refresh_token).toBeTruthy();

    const info = await app<{ status: number; body: Record<string, unknown> }>("userinfo()");
    expect(info).toEqual({ status: 200, body: expect.objectContaining({ sub: ALICE_SUB, roles: ["spa-tester"] }) });
    expect(await app<string[]>("keys()")).toContain("dev-key-1");

    const refreshed = await app<{ access_token: string; refresh_token: string }>("refresh()");
    expect(await status()).toBe("refreshed");
    expect(refreshed.access_token).not.toBe(user.access_token);
    expect(refreshed.refresh_token).not.toBe(user.refresh_token);
    expect((await app<{ status: number }>("userinfo()")).status).toBe(200);

    await leave("signOut()");
    // Through the provider's end-session back to the registered `${spa.origin}/` (with `state`).
    await expect.poll(() => page.url(), SOON).toMatch(new RegExp(`^${spa.origin}/(\\?state=[^&]+)?$`));
    await expect.poll(status, SOON).toBe("signed-out");

    // Revoked on the way out (from the page, across origins), and the IdP session is over.
    const refresh = await fetch(`${idp.baseUrl}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", client_id: "public-spa", refresh_token: refreshed.refresh_token }),
    });
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await fetch(`${idp.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(401);
    await Promise.all([page.waitForURL(`${idp.baseUrl}/authorize?**`), leave("signIn()")]);
    await expect(page.locator("#login-form").count()).resolves.toBe(1);

    expect(console.filter((line) => /CORS|Access-Control|blocked/i.test(line))).toEqual([]);
  });

  test("signs in with response_mode=fragment", async () => {
    await signIn("fragment");
    const user = (await app<{ profile: Record<string, unknown> }>("user()"))!;
    expect(user.profile).toMatchObject({ sub: ALICE_SUB, roles: ["spa-tester"] });
    expect(console.filter((line) => /CORS|Access-Control|blocked/i.test(line))).toEqual([]);
  });
});
