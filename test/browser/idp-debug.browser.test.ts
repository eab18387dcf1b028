/**
 * The identity provider's debug page and login page search in headless Chromium, on each runtime:
 * switching the JWKS mode there makes /jwks answer 500, a user added there can sign in (found with
 * the login page's search box), the live lists follow, the clock moves, sessions end, reset empties the state,
 * the keys rotate.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningService, type RuntimeName, startService } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
/** The client's redirect URI: a page on another loopback port, which the browser really reaches. */
let callback: Server;
let redirect: string;
beforeAll(async () => {
  browser = await launchChromium();
  callback = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<h1>callback</h1>"));
  await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
  redirect = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => callback?.close(r));
});

const RUNTIMES: RuntimeName[] = ["node", "deno", "workerd"];
/** How long a page may take to show an answer (a loaded CI machine, a Durable Object's first start). */
const SOON = { timeout: 10_000 };

describe.each(RUNTIMES)("the IdP debug page on %s", (runtime) => {
  let idp: RunningService;
  beforeAll(async () => {
    idp = await startService("idp", { env: { IDP_REDIRECT_URIS: redirect, IDP_SIGNING_KEYS: "" } }, runtime); // rotates them
  }, 120_000);
  afterAll(async () => {
    await idp?.stop();
  });

  const result = (page: Page) => page.locator("#result");

  test("says which client a page on another port uses, and links its own debug client", async () => {
    const page = await browser.newPage();
    await page.goto(`${idp.baseUrl}/debug/ui`);
    const help = await page.locator("#which-client").textContent();
    expect(help).toContain("Use public-spa (public, PKCE S256)");
    expect(help).toContain("http://127.0.0.1:<your port>/callback");
    expect(help).toContain("admits any port (RFC 8252)");
    if (process.env.SCREENSHOT_DIR) {
      await page.locator("#which-client").screenshot({ path: `${process.env.SCREENSHOT_DIR}/idp-debug-which-client-${runtime}.png` });
    }
    await page.click("#debug-client-link");
    // The debug client starts a code flow at this provider: its login page.
    await page.waitForURL(/\/authorize\?/);
    expect(new URL(page.url()).searchParams.get("client_id")).toBe("debug-client");
    await page.close();
  });

  test("switches the JWKS mode, adds a user who then signs in, follows the live lists, moves the clock, resets, rotates the keys", async () => {
    const base = idp.baseUrl;
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/debug/ui`);
    await expect.poll(() => page.locator("#count-sessions").textContent(), SOON).toBe("0");
    expect(await page.locator("#clients").textContent()).toContain("public-spa");

    await page.selectOption('select[aria-label="JWKS mode"]', "500");
    await page.click("#set-jwks-mode");
    await expect.poll(() => result(page).textContent(), SOON).toBe("JWKS mode is now 500");
    expect((await fetch(`${base}/jwks`)).status).toBe(500);
    await page.selectOption('select[aria-label="JWKS mode"]', "normal");
    await page.click("#set-jwks-mode");
    await expect.poll(() => result(page).textContent(), SOON).toBe("JWKS mode is now normal");
    expect((await fetch(`${base}/jwks`)).status).toBe(200);

    const login = `dora-${runtime}`;
    await page.fill('input[aria-label="login"]', login);
    await page.fill('input[aria-label="name"]', "Dora Debug");
    await page.click("#add-user");
    await expect.poll(() => result(page).textContent(), SOON).toBe(`user ${login} added: it signs in from the login page`);
    // A bad user is refused with the provider's message.
    await page.fill('input[aria-label="login"]', " ");
    await page.click("#add-user");
    await expect.poll(() => result(page).getAttribute("class"), SOON).toBe("error");

    // Sign in as the new user: found through the search box, picked, and the code redeemed.
    const signIn = await browser.newPage();
    signIn.setDefaultTimeout(10_000);
    const auth = new URL(`${base}/authorize`);
    auth.search = new URLSearchParams({ client_id: "dev-client", redirect_uri: redirect, response_type: "code", scope: "openid profile", state: "s1" })
      .toString();
    await signIn.goto(auth.href);
    await signIn.fill("#scenario-search", "dora");
    expect(await signIn.locator('button[data-login="alice"]').isHidden()).toBe(true);
    await signIn.click(`button[data-login="${login}"]`);
    await signIn.waitForURL(`${redirect}**`);
    const code = new URL(signIn.url()).searchParams.get("code")!;
    const token = (await (await fetch(`${base}/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect, client_id: "dev-client" }),
    })).json()) as { access_token: string };
    const me = (await (await fetch(`${base}/userinfo`, { headers: { authorization: `Bearer ${token.access_token}` } })).json()) as { name: string };
    expect(me.name).toBe("Dora Debug");
    await signIn.close();

    // The lists follow by themselves.
    await page.locator(`#sessions >> text=${login}`).waitFor({ timeout: 10_000 });
    await page.locator("#tokens >> text=dev-client").waitFor({ timeout: 10_000 });
    await page.fill("#clock-seconds", "60");
    await page.click("#move-clock");
    await expect.poll(() => result(page).textContent(), SOON).toContain("(offset 60 s)");
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/idp-debug.png`, fullPage: true });

    // Ending every session (back-channel logout tokens go out to clients that have a URI).
    await page.click("#end-sessions");
    await expect.poll(() => result(page).textContent(), SOON).toBe("1 session(s) ended; clients with a back-channel logout URI are told");
    await expect.poll(() => page.locator("#count-sessions").textContent(), SOON).toBe("0");

    await page.click("#reset");
    await expect.poll(() => result(page).textContent(), SOON).toContain("reset:");
    await expect.poll(() => page.locator("#count-sessions").textContent(), SOON).toBe("0");

    // Rotating the keys: /jwks then publishes a new dev-key-1 and the previous one as rotated-key-2.
    const keys = async () =>
      Object.fromEntries(((await (await fetch(`${base}/jwks`)).json()) as { keys: { kid: string; n: string }[] }).keys.map((k) => [k.kid, k.n]));
    const before = await keys();
    await page.click("#rotate-keys");
    await expect.poll(() => result(page).textContent(), SOON).toContain("keys rotated");
    const after = await keys();
    expect(after["dev-key-1"]).not.toBe(before["dev-key-1"]);
    expect(after["rotated-key-2"]).toBe(before["dev-key-1"]);
    await page.close();
  });
});
