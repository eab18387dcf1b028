/**
 * The route host's dev page in a real browser: the plan table of a script, then, after an edit
 * that does not load, the error above the table while the previous routes keep serving; a route of
 * the broken edit answers a 404 page that says so; a 403 in dev mode says why.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import type { Browser } from "playwright-core";
import { startIdp } from "../../apps/idp/testing.ts";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type RunningService, startService } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
let service: RunningService;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "routes-dev-page-"));
  await writeFile(
    join(dir, "app.js"),
    `const h = require("httpmod"); const app = h.app();\napp.get("/").public().handle(() => "home");\napp.post("/notes").auth(h.user().required()).csrf().allow("notes:write").audit("note.create").handle(() => "ok");`,
  );
  service = await startService("routes", { args: ["--script", join(dir, "app.js"), "--dev", "--threads", "1"] }, "node");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("shows the plan table, and a script error above it while the old routes serve", async () => {
  const page = await browser.newPage();
  await page.goto(`${service.baseUrl}/_routes`);
  expect(await page.locator("#load-ok").textContent()).toBe("The script loaded.");
  // The host's sign-in routes first, then the script's, each with where it was registered.
  const cells = async (i: number) => page.locator("tbody tr").nth(i).locator("td").allTextContents();
  expect(await page.locator("tbody tr").count()).toBe(6);
  expect(await cells(0)).toEqual(["GET", "/auth/login", "public", "", "", "", "", "(host)"]);
  expect(await cells(4)).toEqual(["GET", "/", "public", "", "", "", "", "/app.js:2:29"]);
  expect(await cells(5)).toEqual(["POST", "/notes", "auth", "", "yes", "notes:write", "note.create", "/app.js:3:101"]);

  await writeFile(join(dir, "app.js"), `const h = require("httpmod"); h.app().get("/", () => "old style");`);
  await page.goto(`${service.baseUrl}/_routes`);
  expect(await page.locator("#load-error").textContent()).toContain("app.get(pattern, handler) was removed");
  expect(await page.locator("tbody tr").count()).toBe(6);
  expect(await (await fetch(`${service.baseUrl}/`)).text()).toBe("home");
  await page.close();
});

test("a route of an edit that does not load answers a 404 page saying so, with a link to /_routes", async () => {
  await writeFile(join(dir, "app.js"), `const h = require("httpmod"); const app = h.app();\napp.get("/").public().handle(() => "home");`);
  expect(await (await fetch(`${service.baseUrl}/`)).text()).toBe("home");
  // A new route with a typo in its builder: the edit does not load, the old routes stay.
  await writeFile(
    join(dir, "app.js"),
    `const h = require("httpmod"); const app = h.app();\napp.get("/").public().handle(() => "home");\napp.get("/hello/:name").pubilc().handle((ctx) => h.html\`<h1>\${ctx.params.name}</h1>\`);`,
  );
  const page = await browser.newPage();
  const res = await page.goto(`${service.baseUrl}/hello/ann`);
  expect(res!.status()).toBe(404);
  expect(await page.locator("#sentence").textContent()).toContain("the script's last edit did not load");
  expect(await page.locator("#sentence").textContent()).toContain('app.get("/hello/:name").pubilc is not a function');
  expect(await page.locator("#sentence").textContent()).toContain("did you mean .public()?");
  if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/routes-404-broken-edit.png`, fullPage: true });
  await page.click('#hint a[href="/_routes"]');
  expect(await page.locator("#load-error").textContent()).toContain("did you mean .public()? (at /app.js:3:");
  await page.close();
});

test("a 403 in dev mode says which action, which rule and what it looked at", async () => {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: "dev-key-1", alg: "RS256" };
  const idp = await startIdp({ accessTokenFormat: "jwt", accessTokenAudience: "browser-test", signingKeys: { keys: [signingKey] } });
  const script = join(dir, "me.js");
  await writeFile(script, `const h = require("httpmod"); h.app().get("/me").auth(h.user().required()).allow("me:read").handle(() => "me");`);
  const host = await startService("routes", {
    args: ["--script", script, "--dev", "--threads", "1", "--issuer", idp.issuer, "--audience", "browser-test"],
    healthPath: "/_routes", // the script has no public route
  }, "node");
  try {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ iss: idp.issuer, sub: "ann", aud: "browser-test", scope: "openid profile", roles: ["user"], iat: now, exp: now + 600 })
      .setProtectedHeader({ alg: "RS256", kid: "dev-key-1", typ: "at+jwt" })
      .sign(await importJWK(signingKey, "RS256"));
    const context = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${token}` } });
    const page = await context.newPage();
    const res = await page.goto(`${host.baseUrl}/me`);
    expect(res!.status()).toBe(403);
    const why = await page.locator("#why").textContent();
    expect(why).toContain('Why (dev mode only): action "me:read" refused (not_granted:me:read): no policy is loaded (--policy-file)');
    expect(why).toContain('its scope "openid profile", roles [user], groups (none), permissions (none) do not');
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/routes-403-dev.png`, fullPage: true });
    await context.close();
  } finally {
    await host.stop();
    await idp.stop();
  }
}, 90_000);
