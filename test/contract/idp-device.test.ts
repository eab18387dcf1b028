/**
 * Identity provider: the device authorization grant (RFC 8628). Polling is done with plain fetch so
 * pending / slow_down / denied / expired are visible; time moves with POST /debug/clock, never sleeps.
 */
import { describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import {
  advanceClock,
  ALICE_SUB,
  client,
  codeFlow,
  debugJson,
  DEVICE_CODE_GRANT,
  elementText,
  inputByName,
  postForm,
  rejection,
  useProvider,
  USER_CODE,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

const idp = useProvider();

async function start(scope = "openid email profile", clientId = "dev-client"): Promise<DeviceAuthorization> {
  const res = await postForm(`${idp.base}/device_authorization`, { client_id: clientId, scope });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as unknown as DeviceAuthorization;
}

function poll(deviceCode: string, clientId = "dev-client") {
  return postForm(`${idp.base}/token`, { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: clientId });
}

/** The approving user's browser: POST /device with the form fields. */
async function decide(userCode: string, action: "approve" | "deny", login = "alice") {
  const res = await fetch(`${idp.base}/device`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ user_code: userCode, action, login, password: "" }),
  });
  return { status: res.status, html: await res.text() };
}

/** Waits out the polling interval (and any slow_down increments) on the provider's clock. */
const waitOutInterval = () => advanceClock(idp.base, 30);

describe("POST /device_authorization", () => {
  it("returns device_code, a XXXX-XXXX user_code, verification URIs, expires_in 600 and interval 5", async () => {
    const res = await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "openid" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toMatch(/no-store/);
    const body = res.body as unknown as DeviceAuthorization;
    expect(typeof body.device_code).toBe("string");
    expect(body.device_code.length).toBeGreaterThanOrEqual(16);
    expect(body.user_code).toMatch(USER_CODE);
    expect(body.verification_uri).toBe(`${idp.issuer}/device`);
    const complete = new URL(body.verification_uri_complete);
    expect(complete.origin + complete.pathname).toBe(`${idp.issuer}/device`);
    expect(complete.searchParams.get("user_code")).toBe(body.user_code);
    expect(body.expires_in).toBe(600);
    expect(body.interval).toBe(5);
  });

  it("user codes and device codes differ between grants", async () => {
    const a = await start();
    const b = await start();
    expect(a.user_code).not.toBe(b.user_code);
    expect(a.device_code).not.toBe(b.device_code);
  });

  it("openid-client's initiateDeviceAuthorization accepts the response", async () => {
    const res = await client.initiateDeviceAuthorization(idp.config, { scope: "openid" });
    expect(res.user_code).toMatch(USER_CODE);
    expect(res.interval).toBe(5);
  });

  it("a missing client_id is refused (400 invalid_request or 401 invalid_client)", async () => {
    const res = await postForm(`${idp.base}/device_authorization`, { scope: "openid" });
    expect([400, 401]).toContain(res.status);
    expect(res.body.error).toBe(res.status === 400 ? "invalid_request" : "invalid_client");
  });

  it("an unknown client is 401 invalid_client", async () => {
    const res = await postForm(`${idp.base}/device_authorization`, { client_id: "no-such-client", scope: "openid" });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("invalid_client");
    expect(typeof res.body.error_description).toBe("string");
  });

  it("a scope without openid is 400 invalid_scope", async () => {
    const res = await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "email profile" });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_scope");
  });

  it("web-app needs its secret", async () => {
    const wrong = await postForm(`${idp.base}/device_authorization`, {
      client_id: "web-app",
      client_secret: "wrong",
      scope: "openid",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    const ok = await postForm(`${idp.base}/device_authorization`, {
      client_id: "web-app",
      client_secret: WEB_APP_SECRET,
      scope: "openid",
    });
    expect(ok.status).toBe(200);
    expect(ok.body.user_code).toMatch(USER_CODE);
  });
});

describe("verification page", () => {
  it("GET /device?user_code= shows the form with the code prefilled and approve/deny buttons", async () => {
    const grant = await start();
    const res = await fetch(grant.verification_uri_complete.replace(idp.issuer, idp.base));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toMatch(/id="device-form"/);
    expect(inputByName(html, "user_code")?.value).toBe(grant.user_code);
    expect(inputByName(html, "login")).toBeDefined();
    expect(html).toMatch(/id="approve"/);
    expect(html).toMatch(/id="deny"/);
  });

  it("with an IdP session the approving login is prefilled from it", async () => {
    const grant = await start();
    const { cookie } = await codeFlow(idp.config, { login: "bob" });
    const res = await fetch(`${idp.base}/device?user_code=${grant.user_code}`, { headers: { cookie: cookie! } });
    expect(res.status).toBe(200);
    expect(inputByName(await res.text(), "login")?.value).toBe("bob");
  });

  it("an unknown user code is a 400 page saying 'invalid or expired code'", async () => {
    const res = await decide("ZZZZ-ZZZZ", "approve");
    expect(res.status).toBe(400);
    expect(elementText(res.html, "device-result")).toContain("invalid or expired code");
  });
});

describe("polling and approval", () => {
  it("pending, then slow_down when polled immediately again", async () => {
    const grant = await start();
    const first = await poll(grant.device_code);
    expect(first.status).toBe(400);
    expect(first.body.error).toBe("authorization_pending");
    expect(first.headers.get("cache-control")).toMatch(/no-store/);
    const second = await poll(grant.device_code);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("slow_down");
    await waitOutInterval();
    const third = await poll(grant.device_code);
    expect(third.body.error).toBe("authorization_pending");
    const listed = (await debugJson<Array<{ user_code: string; status: string }>>(idp.base, "/device-grants")).find(
      (g) => g.user_code === grant.user_code,
    );
    expect(listed?.status).toBe("pending");
  });

  it("approval with a lower-cased, space-separated code gives tokens with an ID token; the device code is single use", async () => {
    const grant = await start();
    const typed = grant.user_code.toLowerCase().replace("-", " ");
    const approved = await decide(typed, "approve");
    expect(approved.status).toBe(200);
    expect(elementText(approved.html, "device-result")).toContain("approved");
    const listed = (await debugJson<Array<{ user_code: string; status: string }>>(idp.base, "/device-grants")).find(
      (g) => g.user_code === grant.user_code,
    );
    expect(listed?.status).toBe("approved");

    await waitOutInterval();
    const tokens = await client.genericGrantRequest(idp.config, DEVICE_CODE_GRANT, { device_code: grant.device_code });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.refresh_token).toBeUndefined();
    const claims = decodeJwt(tokens.id_token!);
    expect(claims.sub).toBe(ALICE_SUB);
    expect(claims.aud === "dev-client" || (Array.isArray(claims.aud) && claims.aud.includes("dev-client"))).toBe(true);
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, ALICE_SUB);
    expect(info.email).toBe("alice@example.test");

    await waitOutInterval();
    const reuse = await poll(grant.device_code);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe("invalid_grant");
  });

  it("codes typed with extra hyphens and spaces are normalized; offline_access adds a refresh token", async () => {
    const grant = await start("openid offline_access");
    const raw = grant.user_code.replace("-", "");
    const typed = ` ${raw.slice(0, 2)}-${raw.slice(2, 5).toLowerCase()} ${raw.slice(5)} `;
    const approved = await decide(typed, "approve", "Bob");
    expect(approved.status).toBe(200);
    expect(elementText(approved.html, "device-result")).toContain("approved");
    await waitOutInterval();
    const res = await poll(grant.device_code);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/no-store/);
    expect(typeof res.body.refresh_token).toBe("string");
    expect(typeof res.body.id_token).toBe("string");
    expect(decodeJwt(res.body.id_token as string).name).toBe("bob");
    const refreshed = await client.refreshTokenGrant(idp.config, res.body.refresh_token as string);
    expect(refreshed.access_token).toBeTruthy();
  });

  it("a device code polled by another client is invalid_grant (and stays usable for its owner)", async () => {
    const grant = await start();
    await decide(grant.user_code, "approve");
    await waitOutInterval();
    const other = await postForm(`${idp.base}/token`, {
      grant_type: DEVICE_CODE_GRANT,
      device_code: grant.device_code,
      client_id: "public-spa",
    });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe("invalid_grant");
    await waitOutInterval();
    const own = await poll(grant.device_code);
    expect(own.status).toBe(200);
  });

  it("an unknown device code is invalid_grant", async () => {
    const res = await poll("no-such-device-code");
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("deny makes polling access_denied", async () => {
    const grant = await start();
    const denied = await decide(grant.user_code, "deny");
    expect(denied.status).toBe(200);
    expect(elementText(denied.html, "device-result")).toContain("denied");
    await waitOutInterval();
    const res = await poll(grant.device_code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("access_denied");
  });

  it("an approved code cannot be approved or denied again", async () => {
    const grant = await start();
    expect((await decide(grant.user_code, "approve")).status).toBe(200);
    const again = await decide(grant.user_code, "deny");
    expect(again.status).toBe(400);
    expect(elementText(again.html, "device-result")).toContain("invalid or expired code");
  });

  it("after 600 s polling gives expired_token and the page refuses the code", async () => {
    const grant = await start();
    await advanceClock(idp.base, 601);
    const res = await poll(grant.device_code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("expired_token");
    const page = await decide(grant.user_code, "approve");
    expect(page.status).toBe(400);
    expect(elementText(page.html, "device-result")).toContain("invalid or expired code");
  });
});

describe("the whole grant through openid-client", () => {
  // Each poll is openid-client's own device_code grant request (what pollDeviceAuthorizationGrant
  // sends every `interval` seconds); the waiting between polls happens on the provider's clock.
  const pollWithClient = (deviceCode: string) => client.genericGrantRequest(idp.config, DEVICE_CODE_GRANT, { device_code: deviceCode });

  it("pending, slow_down, approve: tokens with an ID token openid-client has validated", async () => {
    const grant = await client.initiateDeviceAuthorization(idp.config, { scope: "openid email offline_access" });
    expect(grant.verification_uri).toBe(`${idp.issuer}/device`);
    expect((await rejection(pollWithClient(grant.device_code))).error).toBe("authorization_pending");
    expect((await rejection(pollWithClient(grant.device_code))).error).toBe("slow_down");
    await waitOutInterval();
    expect((await rejection(pollWithClient(grant.device_code))).error).toBe("authorization_pending");
    expect((await decide(grant.user_code, "approve", "bob")).status).toBe(200);
    await waitOutInterval();
    const tokens = await pollWithClient(grant.device_code);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.claims()!.name).toBe("bob");
    expect(tokens.refresh_token).toBeTruthy();
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, tokens.claims()!.sub);
    expect(info.email).toBe("bob@example.test");
    await waitOutInterval();
    expect((await rejection(pollWithClient(grant.device_code))).error).toBe("invalid_grant");
  });

  it("deny gives access_denied; expiry gives expired_token", async () => {
    const denied = await client.initiateDeviceAuthorization(idp.config, { scope: "openid" });
    expect((await decide(denied.user_code, "deny")).status).toBe(200);
    expect((await rejection(pollWithClient(denied.device_code))).error).toBe("access_denied");
    const expiring = await client.initiateDeviceAuthorization(idp.config, { scope: "openid" });
    await advanceClock(idp.base, expiring.expires_in + 1);
    expect((await rejection(pollWithClient(expiring.device_code))).error).toBe("expired_token");
  });
});
