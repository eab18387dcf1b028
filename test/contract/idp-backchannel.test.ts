/**
 * OpenID Connect Back-Channel Logout 1.0: a client with a back-channel logout URI
 * (IDP_BACKCHANNEL_LOGOUT_URIS) that got tokens in a session is sent a signed logout token when
 * the session ends: at /end-session, from the debug interface, when a new login replaces it, and
 * when it expires by the provider clock. A receiver in this test checks every claim; a failing
 * receiver never breaks logout.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify } from "jose";
import {
  advanceClock,
  authRequest,
  client,
  debugJson,
  failOnServerErrors,
  getAuthorize,
  getJson,
  type Idp,
  interactiveLogin,
  redeem,
  rp,
  startIdp,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const EVENT = "http://schemas.openid.net/event/backchannel-logout";

interface Received {
  contentType: string | undefined;
  body: URLSearchParams;
}

/** A loopback receiver: what it was sent, and the status it answers with. */
async function receiver(status = 200): Promise<{ url: string; received: Received[]; close(): Promise<void>; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ contentType: req.headers["content-type"], body: new URLSearchParams(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/backchannel`, received, server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Waits (polling, up to 10 s on a loaded machine) until `n` logout tokens have arrived. */
async function arrived(received: Received[], n: number): Promise<Received[]> {
  for (let waited = 0; received.length < n && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  expect(received.length).toBe(n);
  return received.splice(0);
}

/** Waits until a logout token for `sid` has arrived (others may arrive too) and returns it. */
async function arrivedFor(received: Received[], sid: unknown): Promise<Received> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const found = received.find((r) => decodeJwt(r.body.get("logout_token")!).sid === sid);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no logout token for sid ${String(sid)}`);
}

let idp: Idp;
let good: Awaited<ReturnType<typeof receiver>>;
let failing: Awaited<ReturnType<typeof receiver>>;
let refusedUrl: string;

failOnServerErrors();
beforeAll(async () => {
  good = await receiver();
  failing = await receiver(500);
  // A port nothing listens on: the delivery is refused.
  const closed = await receiver();
  refusedUrl = closed.url;
  await closed.close();
  idp = await startIdp({
    IDP_BACKCHANNEL_LOGOUT_URIS: JSON.stringify({ "web-app": good.url, "public-spa": failing.url, "dev-client": refusedUrl }),
    IDP_BACKCHANNEL_TIMEOUT_MS: "2000",
  });
});
afterAll(async () => {
  await idp?.svc.stop();
  await good?.close();
  await failing?.close();
});
beforeEach(() => {
  good.received.length = 0;
  failing.received.length = 0;
});

/** A login by web-app through openid-client, in a fresh browser (its own cookie). */
async function webAppLogin(issuer = idp.issuer, login = "alice") {
  const config = await rp(issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
  const request = await authRequest(config);
  const result = await interactiveLogin(request.url, login);
  const tokens = await redeem(config, result.callback, request);
  return { config, tokens, claims: tokens.claims()!, cookie: result.cookie, callback: result.callback };
}

async function verifyLogoutToken(issuer: string, received: Received): Promise<JWTPayload> {
  expect(received.contentType).toMatch(/^application\/x-www-form-urlencoded/);
  const token = received.body.get("logout_token")!;
  expect(decodeProtectedHeader(token).typ).toBe("logout+jwt");
  const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
    issuer,
    audience: "web-app",
    typ: "logout+jwt",
    algorithms: ["RS256"],
  });
  expect(payload.events).toEqual({ [EVENT]: {} });
  expect(typeof payload.jti).toBe("string");
  expect(typeof payload.iat).toBe("number");
  expect(payload.nonce).toBeUndefined();
  return payload;
}

describe("back-channel logout", () => {
  it("discovery says so", async () => {
    const d = await getJson(`${idp.issuer}/.well-known/openid-configuration`);
    expect(d.body.backchannel_logout_supported).toBe(true);
    expect(d.body.backchannel_logout_session_supported).toBe(true);
  });

  it("the debug interface ends every session, or one subject's, and the clients are told", async () => {
    // First in this file: no other session is live yet.
    const alice = await webAppLogin(idp.issuer, "alice");
    const carol = await webAppLogin(idp.issuer, "carol");
    const dave = await webAppLogin(idp.issuer, "dave");
    const one = await debugJson<{ ended: number }>(idp.base, "/sessions/end", { sub: carol.claims.sub });
    expect(one.ended).toBe(1);
    const [forCarol] = await arrived(good.received, 1);
    expect((await verifyLogoutToken(idp.issuer, forCarol!)).sid).toBe(carol.claims.sid);
    const all = await debugJson<{ ended: number }>(idp.base, "/sessions/end", {});
    expect(all.ended).toBe(2);
    const rest = await arrived(good.received, 2);
    const sids = await Promise.all(rest.map(async (r) => (await verifyLogoutToken(idp.issuer, r)).sid));
    expect(sids.sort()).toEqual([alice.claims.sid, dave.claims.sid].sort());
    // An ended session no longer signs the browser in.
    const config = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const silent = await authRequest(config, { params: { prompt: "none" } });
    const res = await getAuthorize(silent.url, alice.cookie);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });

  it("bad input at /debug/sessions/end is a 400 and ends nothing", async () => {
    const { claims } = await webAppLogin(idp.issuer, "frank");
    for (const body of ["[1]", "not json", JSON.stringify({ sub: 5 }), JSON.stringify({ sub: "" })]) {
      const res = await fetch(`${idp.base}/debug/sessions/end`, { method: "POST", body, headers: { "content-type": "application/json" } });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
    }
    expect(good.received).toEqual([]);
    await debugJson(idp.base, "/sessions/end", { sub: claims.sub });
    await arrived(good.received, 1);
  });

  it("ID tokens carry sid; refreshed ID tokens keep it", async () => {
    const config = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const request = await authRequest(config, { scope: "openid offline_access" });
    const { callback } = await interactiveLogin(request.url, "alice");
    const tokens = await redeem(config, callback, request);
    const sid = tokens.claims()!.sid;
    expect(typeof sid).toBe("string");
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()!.sid).toBe(sid);
  });

  it("/end-session posts a logout token with the session's sid to the client that had tokens in it", async () => {
    const { tokens, claims, cookie } = await webAppLogin(idp.issuer, "erin");
    expect(good.received).toEqual([]);
    const res = await fetch(`${idp.issuer}/end-session?` + new URLSearchParams({ id_token_hint: tokens.id_token! }), { headers: { cookie: cookie! } });
    expect(res.status).toBe(200);
    await res.text();
    const [received] = await arrived(good.received, 1);
    const payload = await verifyLogoutToken(idp.issuer, received!);
    expect(payload.sid).toBe(claims.sid);
    expect(payload.sub).toBe(claims.sub);
    expect(payload.aud).toBe("web-app");
  });

  it("a client that never got tokens in the session is not told; a failing receiver does not break logout", async () => {
    // public-spa (whose receiver answers 500) and dev-client (nothing listens) also have URIs.
    const { tokens } = await webAppLogin(idp.issuer, "grace");
    const spa = await rp(idp.issuer, "public-spa");
    const spaRequest = await authRequest(spa, { pkce: "S256" });
    // The same browser (the cookie of the web-app login) signs in to public-spa silently.
    const { cookie } = await webAppLogin(idp.issuer, "heidi");
    const silent = await getAuthorize(spaRequest.url, cookie);
    expect(silent.status).toBe(302);
    await redeem(spa, new URL(silent.headers.get("location")!), spaRequest);
    const res = await fetch(`${idp.issuer}/end-session`, { headers: { cookie: cookie! } });
    expect(res.status).toBe(200);
    await res.text();
    await arrived(failing.received, 1); // public-spa was told (and answered 500)
    const [one] = await arrived(good.received, 1); // web-app, for that session only
    expect((await verifyLogoutToken(idp.issuer, one!)).sid).not.toBe(tokens.claims()!.sid);
    // dev-client's refused delivery: logout still answered, and the provider still serves.
    const config = await rp(idp.issuer);
    const request = await authRequest(config);
    const login = await interactiveLogin(request.url, "bob");
    await redeem(config, login.callback, request);
    const out = await fetch(`${idp.issuer}/end-session`, { headers: { cookie: login.cookie! } });
    expect(out.status).toBe(200);
    await out.text();
    expect((await fetch(`${idp.issuer}/healthz`)).status).toBe(200);
  });

  it("a new login in the same browser replaces the session: its clients are told", async () => {
    const first = await webAppLogin(idp.issuer, "ivan");
    const config = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const request = await authRequest(config, { params: { prompt: "login" } });
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "dave");
    const res = await fetch(request.url.origin + request.url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: first.cookie! },
    });
    expect(res.status).toBe(302);
    const [received] = await arrived(good.received, 1);
    expect((await verifyLogoutToken(idp.issuer, received!)).sid).toBe(first.claims.sid);
  });

  it("the debug interface ends an issuer by path's sessions ({issuer: name}); a bad name is a 400", async () => {
    const issuer = `${idp.base}/tenant-b`;
    const { claims } = await webAppLogin(issuer, "kim");
    const bad = await fetch(`${idp.base}/debug/sessions/end`, {
      method: "POST",
      body: JSON.stringify({ issuer: "a/b" }),
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    await bad.text();
    const ended = await debugJson<{ ended: number }>(idp.base, "/sessions/end", { issuer: "tenant-b" });
    expect(ended.ended).toBe(1);
    const [received] = await arrived(good.received, 1);
    const payload = await verifyLogoutToken(issuer, received!);
    expect(payload.sid).toBe(claims.sid);
  });

  it("an issuer by path sends logout tokens with its own issuer", async () => {
    const issuer = `${idp.base}/tenant-a`;
    const { tokens, claims } = await webAppLogin(issuer);
    const res = await fetch(`${issuer}/end-session?` + new URLSearchParams({ id_token_hint: tokens.id_token! }));
    await res.text();
    const [received] = await arrived(good.received, 1);
    const payload = await verifyLogoutToken(issuer, received!);
    expect(payload.sid).toBe(claims.sid);
  });

  it("a session that expires by the provider clock: its clients are told when the clock moves", async () => {
    // Last in this file: every session still live expires too.
    const { claims } = await webAppLogin(idp.issuer, "judy");
    await advanceClock(idp.base, 3600); // an hour: the 24-hour session lives on
    await new Promise((r) => setTimeout(r, 100));
    expect(good.received).toEqual([]);
    await advanceClock(idp.base, 24 * 3600);
    const received = await arrivedFor(good.received, claims.sid);
    expect((await verifyLogoutToken(idp.issuer, received)).sub).toBe(claims.sub);
  });
});
