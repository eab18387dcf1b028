/**
 * Identity provider: pushed authorization requests (RFC 9126), on every runtime and through two
 * instances on one database. openid-client pushes and signs in (buildAuthorizationUrlWithPAR);
 * hand-made requests check the refusals: client authentication as at /token, the pushed
 * parameters validated as /authorize validates them, a request_uri that is single-use (also when
 * two instances race for it), short-lived and bound to its client, and
 * `require_pushed_authorization_requests` per client and provider-wide.
 */
import { describe, expect, it } from "vitest";
import {
  advanceClock,
  authRequest,
  basicAuth,
  client,
  getAuthorize,
  getJson,
  interactiveLogin,
  postForm,
  postLogin,
  redeem,
  REDIRECT_URI,
  rp,
  useProvider,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{20,}$/;

/** The authorization parameters of a code flow request (openid-client builds the same). */
function pushParams(extra: Record<string, string> = {}): Record<string, string> {
  return { response_type: "code", redirect_uri: REDIRECT_URI, scope: "openid email", state: "s-1", nonce: "n-1", ...extra };
}

/** Pushes for web-app (confidential, Basic) and returns the request_uri. */
async function push(issuer: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await postForm(`${issuer}/par`, pushParams(extra), { authorization: basicAuth("web-app", WEB_APP_SECRET) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.request_uri as string;
}

const authorizeUrl = (issuer: string, clientId: string, requestUri: string) =>
  new URL(`${issuer}/authorize?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(requestUri)}`);

describe("pushed authorization requests", () => {
  const idp = useProvider();

  it("are advertised in discovery", async () => {
    const { body } = await getJson(`${idp.issuer}/.well-known/openid-configuration`);
    expect(body.pushed_authorization_request_endpoint).toBe(`${idp.issuer}/par`);
    expect(body.require_pushed_authorization_requests).toBe(false);
  });

  it("openid-client pushes and signs in, for a public and a confidential client", async () => {
    for (const [clientId, auth] of [["dev-client", client.None()], ["web-app", client.ClientSecretBasic(WEB_APP_SECRET)]] as const) {
      const config = await rp(idp.issuer, clientId, auth);
      const request = await authRequest(config, { pkce: "S256" });
      const url = await client.buildAuthorizationUrlWithPAR(config, request.url.searchParams);
      expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
      expect(url.searchParams.get("request_uri")).toMatch(REQUEST_URI);
      const { callback } = await interactiveLogin(url, "alice");
      const tokens = await redeem(config, callback, request);
      expect(tokens.claims()!.aud).toBe(clientId);
      expect(tokens.claims()!.nonce).toBe(request.nonce);
    }
  });

  it("answers 201 with a short expires_in and no-store", async () => {
    const res = await postForm(`${idp.issuer}/par`, pushParams(), { authorization: basicAuth("web-app", WEB_APP_SECRET) });
    expect(res.status).toBe(201);
    expect(res.body.request_uri).toMatch(REQUEST_URI);
    expect(res.body.expires_in).toBe(60);
    expect(res.headers.get("cache-control")).toContain("no-store");
  });

  it("authenticates the client as /token does", async () => {
    const cases: [Record<string, string>, Record<string, string>, number, string][] = [
      [pushParams({ client_id: "web-app" }), {}, 401, "invalid_client"], // confidential without its secret
      [pushParams(), { authorization: basicAuth("web-app", "wrong") }, 401, "invalid_client"],
      [pushParams({ client_id: "nobody" }), {}, 401, "invalid_client"],
      [pushParams(), {}, 400, "invalid_request"], // no client at all
    ];
    for (const [params, headers, status, error] of cases) {
      const res = await postForm(`${idp.issuer}/par`, params, headers);
      expect(res.status, JSON.stringify(params)).toBe(status);
      expect(res.body.error).toBe(error);
    }
  });

  it("validates the pushed parameters as /authorize does, answering in JSON", async () => {
    const auth = { authorization: basicAuth("web-app", WEB_APP_SECRET) };
    const cases: [Record<string, string>, string][] = [
      [pushParams({ request_uri: "urn:ietf:params:oauth:request_uri:x" }), "invalid_request"], // RFC 9126 §2.1
      [pushParams({ redirect_uri: "https://evil.example.com/callback" }), "invalid_request"],
      [pushParams({ response_type: "token" }), "unsupported_response_type"],
      [pushParams({ scope: "email" }), "invalid_scope"],
      [pushParams({ code_challenge_method: "S512", code_challenge: "x".repeat(43) }), "invalid_request"],
    ];
    for (const [params, error] of cases) {
      const res = await postForm(`${idp.issuer}/par`, params, auth);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body.error, JSON.stringify(params)).toBe(error);
      expect(res.headers.get("location")).toBeNull();
    }
    const repeated = await fetch(`${idp.issuer}/par`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basicAuth("web-app", WEB_APP_SECRET) },
      body: new URLSearchParams([...Object.entries(pushParams()), ["scope", "openid"]]),
    });
    expect(repeated.status).toBe(400);
    expect((await repeated.json()).error).toBe("invalid_request");
    expect((await fetch(`${idp.issuer}/par`)).status).toBe(405);
  });

  it("keeps only the authorization parameters, and refuses more than 16 KiB of them", async () => {
    // Any page can make a browser push for a public client: a body of junk must not be stored.
    const junk = await postForm(`${idp.issuer}/par`, pushParams({ client_id: "dev-client", junk: "j".repeat(200_000) }), {
      origin: "https://elsewhere.example",
      "sec-fetch-site": "cross-site",
    });
    expect(junk.status, JSON.stringify(junk.body)).toBe(201);
    const { callback } = await interactiveLogin(authorizeUrl(idp.issuer, "dev-client", junk.body.request_uri as string), "alice");
    expect(callback.searchParams.get("state")).toBe("s-1");
    expect(callback.searchParams.has("junk")).toBe(false);

    const large = await postForm(`${idp.issuer}/par`, pushParams({ client_id: "dev-client", state: "s".repeat(17 * 1024) }));
    expect(large.status).toBe(400);
    expect(large.body.error).toBe("invalid_request");
    expect(large.body.error_description).toContain("16384");
  });

  it("a request_uri is single-use", async () => {
    const url = authorizeUrl(idp.issuer, "web-app", await push(idp.issuer));
    const { callback } = await interactiveLogin(url, "alice");
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(callback.searchParams.get("state")).toBe("s-1");
    for (const again of [await getAuthorize(url), await postLogin(url, "alice")]) {
      expect(again.status).toBe(400);
      expect(again.headers.get("location")).toBeNull();
      await again.arrayBuffer();
    }
  });

  it("a request_uri opened for the login page serves only its login form, once, whichever instance gets it", async () => {
    const url = authorizeUrl(idp.issuer, "web-app", await push(idp.issuer));
    const page = await getAuthorize(url);
    expect(page.status).toBe(200);
    await page.arrayBuffer();
    const second = await getAuthorize(url);
    expect(second.status).toBe(400);
    await second.arrayBuffer();
    // Two logins with it at once (with two instances: one at each): one code.
    const answers = await Promise.all([postLogin(url, "alice"), postLogin(url, "bob")]);
    expect(answers.map((a) => a.status).sort()).toEqual([302, 400]);
    await Promise.all(answers.map((a) => a.arrayBuffer()));
  });

  it("a session answers a pushed request silently, and spends it", async () => {
    const first = await interactiveLogin(authorizeUrl(idp.issuer, "web-app", await push(idp.issuer)), "alice");
    const url = authorizeUrl(idp.issuer, "web-app", await push(idp.issuer, { state: "s-2" }));
    const silent = await getAuthorize(url, first.cookie);
    expect(silent.status).toBe(302);
    const location = new URL(silent.headers.get("location")!);
    expect(location.searchParams.get("state")).toBe("s-2");
    expect(location.searchParams.get("code")).toBeTruthy();
    const again = await getAuthorize(url, first.cookie);
    expect(again.status).toBe(400);
    await again.arrayBuffer();
  });

  it("a request_uri is bound to the client that pushed it", async () => {
    const requestUri = await push(idp.issuer);
    for (const clientId of ["dev-client", "nobody"]) {
      const res = await getAuthorize(authorizeUrl(idp.issuer, clientId, requestUri));
      expect(res.status, clientId).toBe(400);
      await res.arrayBuffer();
    }
    const missing = await getAuthorize(`${idp.issuer}/authorize?request_uri=${encodeURIComponent(requestUri)}`);
    expect(missing.status).toBe(400);
    await missing.arrayBuffer();
    // Still usable by its own client: the refusals spent nothing.
    const page = await getAuthorize(authorizeUrl(idp.issuer, "web-app", requestUri));
    expect(page.status).toBe(200);
    await page.arrayBuffer();
  });

  it("a request_uri expires after expires_in on the provider's clock", async () => {
    const requestUri = await push(idp.issuer);
    await advanceClock(idp.base, 61);
    const res = await getAuthorize(authorizeUrl(idp.issuer, "web-app", requestUri));
    expect(res.status).toBe(400);
    await res.arrayBuffer();
    const unknown = await getAuthorize(authorizeUrl(idp.issuer, "web-app", "urn:ietf:params:oauth:request_uri:never-issued-by-this-provider"));
    expect(unknown.status).toBe(400);
    await unknown.arrayBuffer();
  });

  it("require_pushed_authorization_requests per client: a registered client that asks for it", async () => {
    const reg = await fetch(`${idp.issuer}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", require_pushed_authorization_requests: true }),
    });
    expect(reg.status).toBe(201);
    const { client_id } = await reg.json();
    const config = await rp(idp.issuer, client_id);
    const request = await authRequest(config, { pkce: "S256" });
    const plain = await getAuthorize(request.url);
    expect(plain.status).toBe(302);
    const error = new URL(plain.headers.get("location")!);
    expect(error.searchParams.get("error")).toBe("invalid_request");
    expect(error.searchParams.get("state")).toBe(request.state);
    const { callback } = await interactiveLogin(await client.buildAuthorizationUrlWithPAR(config, request.url.searchParams), "alice");
    expect((await redeem(config, callback, request)).claims()!.aud).toBe(client_id);
    // Other clients are not affected.
    const other = await getAuthorize((await authRequest(await rp(idp.issuer))).url);
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });
});

describe("require_pushed_authorization_requests provider-wide (IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS)", () => {
  const idp = useProvider({ IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS: "on" });

  it("is advertised, refuses plain requests and takes pushed ones", async () => {
    const { body } = await getJson(`${idp.issuer}/.well-known/openid-configuration`);
    expect(body.require_pushed_authorization_requests).toBe(true);
    const config = idp.config;
    const request = await authRequest(config);
    const plain = await getAuthorize(request.url);
    expect(plain.status).toBe(302);
    expect(new URL(plain.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const { callback } = await interactiveLogin(await client.buildAuthorizationUrlWithPAR(config, request.url.searchParams), "alice");
    expect((await redeem(config, callback, request)).claims()!.sub).toBeTruthy();
  });
});
