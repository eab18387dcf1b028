/**
 * Front-channel logout (OpenID Connect Front-Channel Logout 1.0) in headless Chromium: the
 * provider's logout page really loads each client's `frontchannel_logout_uri` in a frame, with
 * `iss` and `sid`, then goes on to the post-logout redirect; and its Content-Security-Policy admits
 * exactly those frames (another frame on the page is blocked before any request leaves).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import * as client from "openid-client";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
let idp: StartedIdp;
/** The relying party's server: callback, front-channel logout URI, post-logout page. */
let rpServer: Server;
let origin: string;
/** Paths and queries the RP server was asked for, in order. */
const hits: URL[] = [];
let context: BrowserContext;
let page: Page;

function startRpServer(): Promise<Server> {
  const server = createServer((req, res) => {
    hits.push(new URL(req.url ?? "/", "http://rp"));
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(
      `<!doctype html><title>rp</title><p id="path">${(req.url ?? "").replace(/[<&"]/g, "")}</p>`,
    );
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  rpServer = await startRpServer();
  origin = `http://127.0.0.1:${(rpServer.address() as AddressInfo).port}`;
  idp = await startIdp({
    clients: [
      {
        client_id: "fc-rp",
        redirect_uris: [`${origin}/callback`],
        post_logout_redirect_uris: [`${origin}/after`],
        frontchannel_logout_uri: `${origin}/frontchannel`,
        frontchannel_logout_session_required: true,
      },
    ],
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await new Promise((done) => rpServer?.close(done));
});

beforeEach(async () => {
  hits.length = 0;
  context = await browser.newContext();
  page = await context.newPage();
});
afterEach(() => context.close());

/** Signs alice in to fc-rp in the browser and redeems the code (so the session has the client). */
async function signIn(): Promise<client.IDToken> {
  const rp = await client.discovery(new URL(idp.issuer), "fc-rp", undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(rp, {
    redirect_uri: `${origin}/callback`,
    scope: "openid",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
  });
  await page.goto(url.href);
  await page.click('button[data-login="alice"]');
  await page.waitForURL(`${origin}/callback?**`);
  const tokens = await client.authorizationCodeGrant(rp, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
  return tokens.claims()!;
}

describe("front-channel logout in a browser", () => {
  test("the logout page loads the client's URI with iss and sid, then redirects to the post-logout URI", async () => {
    const claims = await signIn();
    hits.length = 0;
    const end = new URL(`${idp.issuer}/end-session`);
    end.searchParams.set("client_id", "fc-rp");
    end.searchParams.set("post_logout_redirect_uri", `${origin}/after`);
    end.searchParams.set("state", "bye");
    await page.goto(end.href);
    await page.waitForURL(`${origin}/after?**`);
    const frame = hits.find((u) => u.pathname === "/frontchannel");
    expect(frame, `the RP server saw ${hits.map(String).join(", ")}`).toBeDefined();
    expect(frame!.searchParams.get("iss")).toBe(idp.issuer);
    expect(frame!.searchParams.get("sid")).toBe(claims.sid);
    expect(new URL(page.url()).searchParams.get("state")).toBe("bye");
    // The frame was loaded before the page moved on.
    expect(hits.findIndex((u) => u.pathname === "/frontchannel")).toBeLessThan(hits.findIndex((u) => u.pathname === "/after"));
  });

  test("the page's policy admits exactly the clients' frames: another frame is blocked", async () => {
    await signIn();
    hits.length = 0;
    await page.goto(`${idp.issuer}/end-session`); // no redirect: the page stays
    await page.waitForFunction(() => document.querySelector("iframe.frontchannel-logout")?.getAttribute("data-loaded") === "true");
    expect(hits.map((u) => u.pathname)).toEqual(["/frontchannel"]);
    const violation = await page.evaluate((target) =>
      new Promise<{ directive: string; blocked: string }>((resolve) => {
        document.addEventListener("securitypolicyviolation", (e) => resolve({ directive: e.effectiveDirective, blocked: e.blockedURI }));
        const extra = document.createElement("iframe");
        extra.src = target;
        document.body.append(extra);
      }), `${origin}/not-registered`);
    expect(violation.directive).toBe("frame-src");
    expect(violation.blocked.startsWith(origin)).toBe(true); // reported by origin only (cross-origin)
    expect(hits.map((u) => u.pathname)).toEqual(["/frontchannel"]);
  });
});
