/**
 * Identity provider: /end-session trusts `id_token_hint` only as an ID token it signed for the
 * issuer at hand (OpenID RP-Initiated Logout 1.0 §2, §4). A hint that is unsigned, has
 * `alg: none`, is signed by another key, comes from another issuer (by path), is some other token
 * of the provider (a logout token, a JWT access token) or names another client is a 400 page, and
 * nobody is logged out: the user's sessions keep authenticating silently and no back-channel
 * logout is sent. An expired but genuine hint is accepted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import {
  advanceClock,
  authRequest,
  client,
  debugJson,
  failOnServerErrors,
  getAuthorize,
  type Idp,
  logoutReceiver,
  postLogin,
  redeem,
  rp,
  startIdp,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

/** An issuer by path beside the configured one (idp-issuers.test.ts): same keys, same subjects. */
const TENANT = "tenant-hint";

let idp: Idp;
let backchannel: Awaited<ReturnType<typeof logoutReceiver>>;

failOnServerErrors();
beforeAll(async () => {
  backchannel = await logoutReceiver();
  // JWT access tokens, so one can be presented as a hint; web-app hears of ended sessions.
  idp = await startIdp({ IDP_ACCESS_TOKEN_FORMAT: "jwt", IDP_BACKCHANNEL_LOGOUT_URIS: JSON.stringify({ "web-app": backchannel.url }) });
});
afterAll(async () => {
  await idp?.svc.stop();
  await backchannel?.close();
});
beforeEach(() => {
  backchannel.tokens.length = 0;
});

interface Login {
  config: client.Configuration;
  /** The issuer's session cookie pair (`idp_session=…`, or `idp_session.<name>=…` at an issuer by path). */
  cookie: string;
  idToken: string;
  accessToken: string;
  sub: string;
  sid: string;
}

/** A web-app login in a fresh browser at `issuer` (default: the configured one). */
async function login(name: string, issuer = idp.issuer): Promise<Login> {
  const config = await rp(issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
  const request = await authRequest(config);
  const page = await getAuthorize(request.url);
  expect(page.status).toBe(200);
  await page.arrayBuffer();
  const res = await postLogin(request.url, name);
  expect(res.status).toBe(302);
  const cookie = res.headers.getSetCookie().map((line) => line.split(";")[0]!.trim()).find((pair) => /^idp_session(\.[^=]+)?=./.test(pair));
  expect(cookie).toBeTruthy();
  const tokens = await redeem(config, new URL(res.headers.get("location")!), request);
  const claims = tokens.claims()!;
  return { config, cookie: cookie!, idToken: tokens.id_token!, accessToken: tokens.access_token, sub: claims.sub, sid: String(claims.sid) };
}

function endSession(params: Record<string, string>, issuer = idp.issuer): Promise<Response> {
  return fetch(`${issuer}/end-session?${new URLSearchParams(params)}`, { redirect: "manual" });
}

/** The 400 page of a refused logout request, saying why. */
async function expectRefused(res: Response): Promise<void> {
  expect(res.status).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-type")).toMatch(/text\/html/);
  const html = await res.text();
  expect(html).toContain("Invalid logout request");
  expect(html).toContain("id_token_hint");
}

/** The browser of `user` still signs in silently (prompt=none gives a code). */
async function expectSignedIn(user: Login): Promise<void> {
  const request = await authRequest(user.config, { params: { prompt: "none" } });
  const silent = await getAuthorize(request.url, user.cookie);
  expect(silent.status).toBe(302);
  const callback = new URL(silent.headers.get("location")!);
  expect(callback.searchParams.get("error")).toBeNull();
  expect(callback.searchParams.get("code")).toBeTruthy();
}

const sessionSubs = async () => new Set((await debugJson<{ sub: string }[]>(idp.base, "/sessions")).map((s) => s.sub));

/** Nobody was logged out: the session answers prompt=none, is listed, and web-app heard of no logout. */
async function expectNobodyLoggedOut(user: Login): Promise<void> {
  await expectSignedIn(user);
  if (user.config.serverMetadata().issuer === idp.issuer) expect((await sessionSubs()).has(user.sub)).toBe(true);
  // Deliveries start with the logout; give one a moment to land before saying none came.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(backchannel.tokens.map((t) => decodeJwt(t).sub)).not.toContain(user.sub);
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("id_token_hint is verified before anyone is logged out", () => {
  it("an unsigned hint (signature stripped) naming the user is refused", async () => {
    const user = await login("hint-unsigned");
    const [header, payload] = user.idToken.split(".");
    await expectRefused(await endSession({ id_token_hint: `${header}.${payload}.` }));
    await expectNobodyLoggedOut(user);
  });

  it("an alg none hint is refused", async () => {
    const user = await login("hint-alg-none");
    const forged = `${b64url({ alg: "none", typ: "JWT" })}.${b64url(decodeJwt(user.idToken))}.`;
    await expectRefused(await endSession({ id_token_hint: forged }));
    await expectRefused(await endSession({ id_token_hint: forged, client_id: "web-app" }));
    await expectNobodyLoggedOut(user);
  });

  it("a hint the attacker signed with a key of their own (under the provider's kid) is refused", async () => {
    const user = await login("hint-wrong-key");
    const { privateKey } = await generateKeyPair("RS256");
    const { kid } = decodeProtectedHeader(user.idToken);
    // Everything an attacker needs: the issuer and the subject (derivable from the login name).
    const forged = await new SignJWT({ iss: idp.issuer, sub: user.sub, aud: "web-app", iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: kid! })
      .setExpirationTime("1h")
      .sign(privateKey);
    await expectRefused(await endSession({ id_token_hint: forged }));
    await expectNobodyLoggedOut(user);
  });

  it("a genuine hint of another issuer (by path) ends nothing at this one, and the other way round", async () => {
    const here = await login("hint-other-issuer");
    const there = await login("hint-other-issuer", `${idp.issuer}/${TENANT}`);
    expect(there.sub).toBe(here.sub);
    await expectRefused(await endSession({ id_token_hint: there.idToken }));
    await expectRefused(await endSession({ id_token_hint: here.idToken }, `${idp.issuer}/${TENANT}`));
    await expectNobodyLoggedOut(here);
    await expectNobodyLoggedOut(there);
  });

  it("a logout token of the provider presented as the hint is refused", async () => {
    // A first session's logout (by cookie) makes a logout token for the user...
    const first = await login("hint-logout-token");
    const ended = await fetch(`${idp.issuer}/end-session`, { redirect: "manual", headers: { cookie: first.cookie } });
    expect(ended.status).toBe(200);
    await ended.arrayBuffer();
    let logoutToken: string | undefined;
    for (let waited = 0; !logoutToken && waited < 10_000; waited += 20) {
      logoutToken = backchannel.tokens.find((t) => decodeJwt(t).sid === first.sid);
      if (!logoutToken) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(logoutToken, "a logout token for the first session").toBeTruthy();
    expect(decodeProtectedHeader(logoutToken!).typ).toBe("logout+jwt");
    backchannel.tokens.length = 0;
    // ... which, presented as a hint, ends none of the user's later sessions.
    const second = await login("hint-logout-token");
    await expectRefused(await endSession({ id_token_hint: logoutToken! }));
    await expectNobodyLoggedOut(second);
  });

  it("a JWT access token of the provider presented as the hint is refused", async () => {
    const user = await login("hint-access-token");
    expect(decodeProtectedHeader(user.accessToken).typ).toBe("at+jwt");
    expect(decodeJwt(user.accessToken).sub).toBe(user.sub);
    await expectRefused(await endSession({ id_token_hint: user.accessToken }));
    await expectNobodyLoggedOut(user);
  });

  it("a genuine hint sent with another client's client_id is refused", async () => {
    const user = await login("hint-wrong-aud");
    expect(decodeJwt(user.idToken).aud).toBe("web-app");
    await expectRefused(await endSession({ id_token_hint: user.idToken, client_id: "dev-client" }));
    await expectNobodyLoggedOut(user);
  });

  it("a genuine hint with its own client_id is accepted: the user's sessions end and web-app is told", async () => {
    const user = await login("hint-right-aud");
    const res = await endSession({ id_token_hint: user.idToken, client_id: "web-app" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect((await sessionSubs()).has(user.sub)).toBe(false);
    for (let waited = 0; !backchannel.tokens.some((t) => decodeJwt(t).sid === user.sid) && waited < 10_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(backchannel.tokens.map((t) => decodeJwt(t).sid)).toContain(user.sid);
  });

  // Last: it moves the provider clock.
  it("an expired but genuine hint is accepted (RP-Initiated Logout §2) and ends the user's sessions", async () => {
    const user = await login("hint-expired");
    const { now } = await advanceClock(idp.base, 2 * 3600); // ID tokens last 1 h, sessions 24 h
    expect(decodeJwt(user.idToken).exp! * 1000).toBeLessThan(Date.parse(now));
    const res = await endSession({ id_token_hint: user.idToken, post_logout_redirect_uri: "http://localhost:8080", state: "s-expired" });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("state")).toBe("s-expired");
    expect((await sessionSubs()).has(user.sub)).toBe(false);
    const request = await authRequest(user.config, { params: { prompt: "none" } });
    const silent = await getAuthorize(request.url, user.cookie);
    expect(new URL(silent.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });
});
