/**
 * One origin in a real browser: a route host serving examples/routes/one-origin/app.js, with the
 * identity provider mounted at /idp and the session service at /sessions in the same process,
 * browser sign-in against that provider, and the example's policy.
 */
import { readFile } from "node:fs/promises";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { loadQuickJS } from "../../lib/sandbox/index.ts";
import type { RunningServer } from "../../lib/runtime.ts";
import { createBearerAuthenticator } from "../../apps/routes/auth/bearer.ts";
import { createBrowserSignIn, sessionOrBearer } from "../../apps/routes/auth/browser.ts";
import { policyAuthorizer, readPolicy } from "../../apps/routes/auth/policy.ts";
import { nodeFileTree } from "../../lib/adapters/node-files.ts";
import { createNodeThreadRuntimes } from "../../apps/sessions/live/node-threads.ts";
import { createRouteHost, type RouteHost } from "../../apps/routes/host.ts";
import { idpMountable, sessionsMountable, type SessionsMount } from "../../apps/routes/mountables.ts";
import { renderValue } from "../../apps/routes/render.ts";
import { inProcessScriptRuntime } from "../../apps/routes/script/runtime.ts";
import { DEFAULT_SCRIPT_LIMITS } from "../../apps/routes/script/script-sandbox.ts";
import { freePort, ROOT } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
let host: RouteHost;
let server: RunningServer;
let base: string;
let sessions: SessionsMount;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const issuer = `${base}/idp`;
  const signIn = createBrowserSignIn({ issuer, clientId: "one-origin" });
  const engine = await loadQuickJS();
  sessions = sessionsMountable(nodeRuntime(), { files: nodeFileTree(), threadRuntimes: createNodeThreadRuntimes });
  const policy = await readPolicy(await readFile(`${ROOT}/examples/routes/one-origin/policy.yaml`, "utf8"), "policy.yaml");
  host = createRouteHost({
    renderer: renderValue,
    // The mounted provider reads its settings as from the environment: this host's client.
    mountables: { idp: { handler: idpMountable({ env: { IDP_CLIENT_ID: "one-origin", IDP_REDIRECT_URIS: `${base}/auth/callback` } }) }, sessions: { handler: sessions.handler } },
    auth: { authenticator: sessionOrBearer(signIn.authenticator, createBearerAuthenticator({ issuer })), authorizer: policyAuthorizer(policy) },
    runtime: (natives, hostCalls) => inProcessScriptRuntime(engine, { natives, hostCalls, limits: DEFAULT_SCRIPT_LIMITS }),
  });
  signIn.register(host);
  await host.loadScript({ entry: "/app.js", files: { "/app.js": await readFile(`${ROOT}/examples/routes/one-origin/app.js`, "utf8") } });
  server = await nodeRuntime().serve((req, env) => host.fetch(req, env), { hostname: "127.0.0.1", port });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await host?.close();
  await sessions?.close();
});

test("a visitor opens a page, signs in at the mounted provider, and comes back signed in", async () => {
  const page = await browser.newPage();
  await page.goto(`${base}/`);
  expect(await page.locator("h1").textContent()).toBe("One origin");
  await page.goto(`${base}/me`);
  // Sent to /auth/login, then to the provider's login page under /idp.
  expect(new URL(page.url()).pathname).toBe("/idp/authorize");
  await page.fill('input[name="login"]', "admin");
  await page.click("#sign-in");
  await page.waitForURL(`${base}/me`);
  expect(await page.locator("h1").textContent()).toBe("Signed in");
  expect(await page.locator("dd dd").nth(2).textContent()).toBe("admin@example.test");
  if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/one-origin-me.png` });
  // The session service behind sign-in: admin may use it, through the page's own session.
  const health = await page.evaluate(async () => (await fetch("/sessions/api/v1/health")).json());
  expect(health).toEqual({ status: "ok" });
  await page.goto(`${base}/auth/logout`);
  await page.goto(`${base}/me`);
  expect(new URL(page.url()).pathname).toBe("/idp/authorize");
  // Another user is signed in, and the policy keeps them out of the session service.
  await page.fill('input[name="login"]', "alice");
  await page.click("#sign-in");
  await page.waitForURL(`${base}/me`);
  expect(await page.evaluate(async () => (await fetch("/sessions/api/v1/health")).status)).toBe(403);
  await page.close();
});
