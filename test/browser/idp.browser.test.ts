/**
 * The identity provider's pages in a real browser: headless Chromium (./chromium.ts: CHROMIUM_PATH, a system one, or the npm package's) driven by
 * playwright-core, against a provider started in-process with `startIdp`. A tiny callback server on
 * another loopback port is the client's redirect URI, so the browser really follows the redirect.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import * as client from "openid-client";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { launchChromium } from "./chromium.ts";

/** `sub` of the synthetic user `alice` (docs/idp.md#users-and-scenarios). */
const ALICE_SUB = "user-NfTfZYYJ1idFA58J4RDISA";
const CLIENT_ID = "browser-app";

let browser: Browser;
let idp: StartedIdp;
let callbackServer: Server;
let callbackUrl: string;
let context: BrowserContext;
let page: Page;
let rp: client.Configuration;

/** The redirect target: a page that shows the query it received. */
function startCallbackServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const query = new URL(req.url ?? "/", "http://x").searchParams;
    const rows = [...query].map(([k, v]) => `<dt>${k}</dt><dd id="${k}">${v.replace(/[<&"]/g, "")}</dd>`).join("");
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(`<!doctype html><title>callback</title><h1>Callback</h1><dl>${rows}</dl>`);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  callbackServer = await startCallbackServer();
  callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  idp = await startIdp({
    users: [{ login: "carol", password: "carol-pw", name: "Carol Example", category: "Team" }],
    clients: [{ client_id: CLIENT_ID, redirect_uris: [callbackUrl], require_pkce: true }],
  });
  rp = await client.discovery(new URL(idp.issuer), CLIENT_ID, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await new Promise((done) => callbackServer?.close(done));
});

// A fresh context per test: no IdP session cookie carries over.
beforeEach(async () => {
  context = await browser.newContext();
  page = await context.newPage();
});
afterEach(() => context.close());

async function authorizationRequest() {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(rp, {
    redirect_uri: callbackUrl,
    scope: "openid email profile",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  return { url, verifier, state, nonce };
}

async function exchange(request: Awaited<ReturnType<typeof authorizationRequest>>) {
  await page.waitForURL(`${callbackUrl}?**`);
  const landed = new URL(page.url());
  expect(await page.locator("#code").textContent()).toBe(landed.searchParams.get("code"));
  expect(landed.searchParams.get("iss")).toBe(idp.issuer);
  return client.authorizationCodeGrant(rp, landed, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
}

describe("code flow through the login page", () => {
  test("a quick pick signs in alice and the browser lands on the callback", async () => {
    const request = await authorizationRequest();
    const response = await page.goto(request.url.href);
    expect(response?.status()).toBe(200);
    await expect(page.locator("#login-form").count()).resolves.toBe(1);
    const categories = await page.locator("section[data-category]").evaluateAll((els) => els.map((e) => e.getAttribute("data-category")));
    expect(categories).toEqual(expect.arrayContaining(["Normal users", "Team"]));
    expect(await page.locator('section[data-category="Team"] h2').textContent()).toBe("Team");
    await page.screenshot({ path: "/tmp/idp-login.png", fullPage: true });

    await page.click('button[data-login="alice"]');
    const tokens = await exchange(request);
    expect(tokens.claims()?.sub).toBe(ALICE_SUB);
    expect(tokens.claims()?.email).toBe("alice@example.test");
  });

  test("typing a seeded user's login and password signs in; a wrong password is refused", async () => {
    const wrong = await authorizationRequest();
    await page.goto(wrong.url.href);
    await page.fill('input[name="login"]', "carol");
    await page.fill('input[name="password"]', "not-her-password");
    const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.click("#sign-in")]);
    expect(refused.status()).toBe(401);
    expect(await page.textContent("body")).toContain("invalid login or password");
    expect(page.url()).not.toContain(callbackUrl);

    const request = await authorizationRequest();
    await page.goto(request.url.href);
    await page.fill('input[name="login"]', "Carol");
    await page.fill('input[name="password"]', "carol-pw");
    await page.click("#sign-in");
    const tokens = await exchange(request);
    expect(tokens.claims()?.name).toBe("Carol Example");
    const info = await client.fetchUserInfo(rp, tokens.access_token, tokens.claims()!.sub);
    expect(info.name).toBe("Carol Example");
  });
});

describe("device approval", () => {
  test("the verification page approves the code and the device gets tokens", async () => {
    const started = await fetch(`${idp.url}/device_authorization`, {
      method: "POST",
      body: new URLSearchParams({ client_id: "dev-client", scope: "openid email" }),
    });
    expect(started.status).toBe(200);
    const grant = (await started.json()) as { device_code: string; user_code: string; verification_uri_complete: string; interval: number };

    await page.goto(grant.verification_uri_complete);
    await expect(page.locator("#device-form").count()).resolves.toBe(1);
    expect(await page.inputValue('#device-form input[name="user_code"]')).toBe(grant.user_code);
    await page.fill('#device-form input[name="login"]', "bob");
    await page.click("#approve");
    await page.waitForSelector("#device-result");
    expect(await page.textContent("#device-result")).toContain("approved");

    // Polling honors the interval; move the provider's clock instead of sleeping.
    await idp.advanceClock(grant.interval + 1);
    const token = await fetch(`${idp.url}/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: grant.device_code, client_id: "dev-client" }),
    });
    expect(token.status).toBe(200);
    const body = (await token.json()) as { access_token: string; id_token: string; token_type: string };
    expect(body.token_type).toBe("Bearer");
    const claims = JSON.parse(Buffer.from(body.id_token.split(".")[1]!, "base64url").toString()) as { sub: string; email: string };
    expect(claims.email).toBe("bob@example.test");
  });

  test("an unknown code shows invalid or expired code", async () => {
    const response = await page.goto(`${idp.url}/device?user_code=ABCD-EFGH`);
    expect(response?.status()).toBe(200);
    await page.fill('#device-form input[name="login"]', "bob");
    const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.click("#approve")]);
    expect(refused.status()).toBe(400);
    expect(await page.textContent("#device-result")).toContain("invalid or expired code");
  });
});
