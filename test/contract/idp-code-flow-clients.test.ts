/**
 * Identity provider: the authorization code flow's client rules (PKCE for a public client,
 * redirect URIs, client authentication, codes bound to their client) and a single-page app on
 * another origin, driven by openid-client. Discovery, the flow itself and silent authentication
 * are in idp-code-flow.test.ts.
 */
import { describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import {
  ALICE_SUB,
  authRequest,
  client,
  codeFlow,
  getAuthorize,
  interactiveLogin,
  redeem,
  REDIRECT_URI,
  rejection,
  rp,
  useProvider,
  userinfo,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const idp = useProvider();

describe("client rules", () => {
  it("public-spa without PKCE gets an invalid_request error redirect with state and iss", async () => {
    const spa = await rp(idp.issuer, "public-spa");
    const request = await authRequest(spa, { pkce: "none" });
    const res = await getAuthorize(request.url);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.searchParams.get("state")).toBe(request.state);
    expect(location.searchParams.get("iss")).toBe(idp.issuer);
    expect(location.searchParams.get("code")).toBeNull();
  });

  it("public-spa with PKCE completes the flow", async () => {
    const spa = await rp(idp.issuer, "public-spa");
    const { claims } = await codeFlow(spa, { pkce: "S256" });
    expect(claims.aud === "public-spa" || (Array.isArray(claims.aud) && claims.aud.includes("public-spa"))).toBe(true);
  });

  it("a code issued to dev-client cannot be redeemed by web-app", async () => {
    const request = await authRequest(idp.config);
    const { callback } = await interactiveLogin(request.url, "alice");
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const err = await rejection(redeem(webApp, callback, request));
    expect(err.error).toBe("invalid_grant");
    expect(err.status).toBe(400);
  });

  it("a replayed code is invalid_grant and revokes the tokens it issued", async () => {
    const request = await authRequest(idp.config);
    const { callback } = await interactiveLogin(request.url, "alice");
    const first = await redeem(idp.config, callback, request);
    const ok = await userinfo(`${idp.base}/userinfo`, `Bearer ${first.access_token}`);
    expect(ok.status).toBe(200);
    const err = await rejection(redeem(idp.config, callback, request));
    expect(err.error).toBe("invalid_grant");
    const revoked = await userinfo(`${idp.base}/userinfo`, `Bearer ${first.access_token}`);
    expect(revoked.status).toBe(401);
  });

  it("an unregistered redirect_uri gets a 400 page and no redirect", async () => {
    const request = await authRequest(idp.config, { redirectUri: "http://evil.test/callback" });
    const res = await getAuthorize(request.url);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    await res.arrayBuffer();
  });

  it("a redirect_uri registered only for another client is refused for dev-client", async () => {
    // http://localhost:8080/callback belongs to public-spa and web-app, not dev-client.
    const request = await authRequest(idp.config, { redirectUri: "http://localhost:8080/callback" });
    const res = await getAuthorize(request.url);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    await res.arrayBuffer();
  });

  it("an unknown client gets a 400 page", async () => {
    const request = await authRequest(idp.config);
    request.url.searchParams.set("client_id", "no-such-client");
    const res = await getAuthorize(request.url);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    await res.arrayBuffer();
  });

  it("web-app authenticates with its secret via client_secret_basic and client_secret_post", async () => {
    for (const auth of [client.ClientSecretBasic(WEB_APP_SECRET), client.ClientSecretPost(WEB_APP_SECRET)]) {
      const webApp = await rp(idp.issuer, "web-app", auth);
      const { claims } = await codeFlow(webApp);
      expect(claims.sub).toBe(ALICE_SUB);
    }
  });

  it("web-app with a wrong secret is 401 invalid_client", async () => {
    for (const auth of [client.ClientSecretBasic("wrong-secret"), client.ClientSecretPost("wrong-secret"), client.None()]) {
      const webApp = await rp(idp.issuer, "web-app", auth);
      const request = await authRequest(webApp);
      const { callback } = await interactiveLogin(request.url, "alice");
      const err = await rejection(redeem(webApp, callback, request));
      expect(err.error).toBe("invalid_client");
      expect(err.status).toBe(401);
    }
  });
});

// The browser-app features (each with its own suite: idp-cors, idp-response-modes,
// idp-redirect-uris, idp-login-page) once here too, so they also run against the edge entry.
describe("a single-page app on another origin", () => {
  it("a loopback redirect URI on another port, the fragment, extra claims, and CORS at token and userinfo", async () => {
    const origin = "http://127.0.0.1:4173"; // the port differs from the registered 127.0.0.1:3000
    const request = await authRequest(idp.config, { redirectUri: `${origin}/callback`, params: { response_mode: "fragment" } });
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "alice");
    form.set("extra_claims", '{"roles": ["tester"]}');
    const login = await fetch(`${idp.issuer}/authorize`, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(login.status).toBe(302);
    const fragment = new URLSearchParams(new URL(login.headers.get("location")!).hash.slice(1));
    expect(fragment.get("state")).toBe(request.state);

    const preflight = await fetch(`${idp.issuer}/userinfo`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
    const token = await fetch(`${idp.issuer}/token`, {
      method: "POST",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: "dev-client",
        code: fragment.get("code")!,
        code_verifier: request.verifier!,
        redirect_uri: `${origin}/callback`,
      }),
    });
    expect(token.status).toBe(200);
    expect(token.headers.get("access-control-allow-origin")).toBe(origin);
    const { access_token, id_token } = (await token.json()) as { access_token: string; id_token: string };
    expect(decodeJwt(id_token).roles).toEqual(["tester"]);
    const info = await fetch(`${idp.issuer}/userinfo`, { headers: { origin, authorization: `Bearer ${access_token}` } });
    expect(info.headers.get("access-control-allow-origin")).toBe(origin);
    expect(((await info.json()) as { roles: string[] }).roles).toEqual(["tester"]);
  });
});
