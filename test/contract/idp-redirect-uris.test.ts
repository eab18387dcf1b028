// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * Identity provider: where a browser may be sent back. Redirect URIs on a loopback IP literal
 * (`127.0.0.1`, `[::1]`) match any port with the same scheme, host, path and query (RFC 8252
 * §7.3), so a route host on 127.0.0.1:<any port> signs in with the default client public-spa;
 * everything else, `localhost` included (a name, RFC 8252 §8.3), matches exactly. Post-logout
 * redirect URIs follow the same rule and are settable for the configured client
 * (IDP_POST_LOGOUT_REDIRECT_URIS, --post-logout-redirect-uris, the config file).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authRequest, client, codeFlow, failOnServerErrors, getAuthorize, interactiveLogin, postForm, rp, startIdp, type Idp } from "./idp-helpers.ts";

const SPA = "http://localhost:4000";

let idp: Idp;

failOnServerErrors();
beforeAll(async () => {
  idp = await startIdp({
    IDP_CLIENT_ID: "my-spa",
    IDP_REDIRECT_URIS: `${SPA}/callback,http://[::1]/native/cb`,
    IDP_POST_LOGOUT_REDIRECT_URIS: `${SPA}/,${SPA}/index.html`,
  });
});
afterAll(() => idp?.svc.stop());

/** The status of GET /authorize for this client and redirect URI (200: the login page). */
async function authorizeStatus(clientId: string, redirectUri: string): Promise<number> {
  const config = await rp(idp.issuer, clientId);
  const res = await getAuthorize((await authRequest(config, { redirectUri })).url);
  await res.arrayBuffer();
  return res.status;
}

describe("loopback redirect URIs (RFC 8252 §7.3)", () => {
  it("the route host on 127.0.0.1:8090 signs in with public-spa, whose URI is registered on port 8080", async () => {
    const spa = await rp(idp.issuer, "public-spa");
    const redirect = "http://127.0.0.1:8090/auth/callback";
    const { claims, callback } = await codeFlow(spa, { params: { redirect_uri: redirect } });
    expect(`${callback.origin}${callback.pathname}`).toBe(redirect);
    expect(claims.aud).toBe("public-spa");
  });

  it("any port, and none, of a registered 127.0.0.1 or [::1] URI; the same scheme, host, path and query only", async () => {
    for (const uri of ["http://127.0.0.1:8080/callback", "http://127.0.0.1:1/callback", "http://127.0.0.1:65535/auth/callback", "http://127.0.0.1/callback"]) {
      expect(await authorizeStatus("public-spa", uri), uri).toBe(200);
    }
    for (const uri of ["http://[::1]/native/cb", "http://[::1]:49152/native/cb"]) {
      expect(await authorizeStatus("dev-client", uri), uri).toBe(200);
    }
    for (const uri of [
      "http://127.0.0.1:8090/other",
      "http://127.0.0.1:8090/callback/",
      "http://127.0.0.1:8090/callback?next=/admin",
      "https://127.0.0.1:8090/callback",
      "http://127.0.0.2:8090/callback",
      "http://127.0.0.1:99999/callback",
      "http://127.0.0.1:8090@evil.test/callback",
      "http://127.0.0.1.evil.test:8090/callback",
      "http://[::1]:8090/callback",
      "http://127.0.0.1:49152/native/cb",
    ]) {
      expect(await authorizeStatus("public-spa", uri), uri).toBe(400);
    }
  });

  it("localhost is a name, not a loopback IP literal: its port must match", async () => {
    expect(await authorizeStatus("public-spa", "http://localhost:8080/callback")).toBe(200);
    expect(await authorizeStatus("public-spa", "http://localhost:8090/callback")).toBe(400);
    expect(await authorizeStatus("my-spa", "http://localhost:4001/callback")).toBe(400);
  });

  it("a refusal lists the client's redirect URIs and the loopback rule; an unknown client is told how to register", async () => {
    const page = async (query: Record<string, string>) => {
      const res = await getAuthorize(`${idp.base}/authorize?${new URLSearchParams({ response_type: "code", scope: "openid", ...query })}`);
      expect(res.status).toBe(400);
      return (await res.text()).replaceAll("&quot;", '"').replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&#39;", "'");
    };
    const wrongPort = await page({ client_id: "my-spa", redirect_uri: "http://localhost:4001/callback" });
    expect(wrongPort).toContain('redirect_uri "http://localhost:4001/callback" is not registered for client "my-spa". Registered: http://localhost:4000/callback, http://[::1]/native/cb.');
    expect(wrongPort).toContain("one on 127.0.0.1 or [::1] also admits any port (RFC 8252)");
    expect(wrongPort).toContain("docs/idp.md#clients");
    const unknown = await page({ client_id: "my-app", redirect_uri: "http://127.0.0.1:4000/cb" });
    expect(unknown).toContain('client "my-app" is not registered: register it when the provider starts: --client-id my-app --redirect-uris');
    // Registration is open on a loopback issuer (the default, auto), and said where.
    expect(unknown).toContain(`POST {"redirect_uris": ["<your callback>"]} to ${idp.issuer}/register (dynamic registration, RFC 7591)`);
    const discovery = (await (await fetch(`${idp.base}/.well-known/openid-configuration`)).json()) as { registration_endpoint?: string };
    expect(discovery.registration_endpoint).toBe(`${idp.issuer}/register`);
  });

  it("the code is redeemed with the redirect URI of its request, port included", async () => {
    const spa = await rp(idp.issuer, "public-spa");
    const request = await authRequest(spa, { redirectUri: "http://127.0.0.1:8090/callback" });
    const { callback } = await interactiveLogin(request.url, "alice");
    const exchange = (redirectUri: string) =>
      postForm(`${idp.base}/token`, { grant_type: "authorization_code", client_id: "public-spa", code: callback.searchParams.get("code")!, code_verifier: request.verifier!, redirect_uri: redirectUri });
    expect((await exchange("http://127.0.0.1:8091/callback")).body.error).toBe("invalid_grant");
    expect((await exchange("http://127.0.0.1:8090/callback")).status).toBe(200);
  });
});

describe("post-logout redirect URIs", () => {
  const endSession = async (params: Record<string, string>) => {
    const res = await fetch(`${idp.base}/end-session?${new URLSearchParams(params)}`, { redirect: "manual" });
    await res.arrayBuffer();
    return res;
  };

  it("the configured client's own list (IDP_POST_LOGOUT_REDIRECT_URIS), beside the origin of its redirect URIs", async () => {
    for (const uri of [`${SPA}/`, `${SPA}/index.html`, SPA]) {
      const res = await endSession({ client_id: "my-spa", post_logout_redirect_uri: uri, state: "s1" });
      expect(res.status, uri).toBe(302);
      const location = new URL(res.headers.get("location")!);
      expect(`${location.origin}${location.pathname}`).toBe(new URL(uri).href);
      expect(location.searchParams.get("state")).toBe("s1");
    }
    for (const uri of [`${SPA}/other.html`, `${SPA}/index.html?x=1`, "http://localhost:4001/"]) {
      expect((await endSession({ client_id: "my-spa", post_logout_redirect_uri: uri })).status, uri).toBe(400);
    }
  });

  it("are the configured client's: another client may not use them", async () => {
    expect((await endSession({ client_id: "public-spa", post_logout_redirect_uri: `${SPA}/index.html` })).status).toBe(400);
    // Without client_id any client's list counts.
    expect((await endSession({ post_logout_redirect_uri: `${SPA}/index.html` })).status).toBe(302);
  });

  it("a loopback IP literal's on any port: the route host on 127.0.0.1:8090 comes back after logout with public-spa", async () => {
    const spa = await rp(idp.issuer, "public-spa");
    const { tokens } = await codeFlow(spa, { params: { redirect_uri: "http://127.0.0.1:8090/auth/callback" } });
    const url = client.buildEndSessionUrl(spa, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: "http://127.0.0.1:8090" });
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("http://127.0.0.1:8090/");
    await res.arrayBuffer();
    expect((await endSession({ client_id: "public-spa", post_logout_redirect_uri: "http://localhost:8090" })).status).toBe(400);
  });
});
