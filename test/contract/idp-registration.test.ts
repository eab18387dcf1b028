// deno-lint-ignore-file no-explicit-any -- JSON read back from a service, typed where it is checked
/**
 * Identity provider: dynamic client registration (RFC 7591, OIDC Registration 1.0) and its
 * management API (RFC 7592), on every runtime and through two instances on one database.
 * openid-client registers and then drives the registered client through the code flow, refresh,
 * introspection, revocation and logout; hand-made requests check every refusal the RFCs name.
 * Also: the registration policies (open on loopback by default, token, off), issuers by path
 * keeping their clients apart, and redirect URI patterns for preview environments.
 */
import { describe, expect, it } from "vitest";
import {
  authRequest,
  basicAuth,
  client,
  codeFlow,
  getAuthorize,
  getJson,
  interactiveLogin,
  logoutReceiver,
  postForm,
  REDIRECT_URI,
  rejection,
  useProvider,
} from "./idp-helpers.ts";

const INITIAL_TOKEN = "initial-access-token-for-tests";
const insecure = { execute: [client.allowInsecureRequests] };

interface Registered extends Record<string, unknown> {
  client_id: string;
  client_secret?: string;
  registration_access_token: string;
  registration_client_uri: string;
}

async function register(issuer: string, metadata: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${issuer}/register`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof metadata === "string" ? metadata : JSON.stringify(metadata),
  });
  return { status: res.status, headers: res.headers, body: JSON.parse((await res.text()) || "null") };
}

async function manage(uri: string, method: string, token: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(uri, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** A registered client's openid-client configuration (discovered, with its secret). */
async function rpFor(issuer: string, registered: Registered, auth: client.ClientAuth): Promise<client.Configuration> {
  return client.discovery(new URL(issuer), registered.client_id, registered as Partial<client.ClientMetadata>, auth, {
    execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
  });
}

describe("open registration (the default on loopback)", () => {
  const idp = useProvider();

  it("is advertised in discovery", async () => {
    const { body } = await getJson(`${idp.issuer}/.well-known/openid-configuration`);
    expect(body.registration_endpoint).toBe(`${idp.issuer}/register`);
  });

  it("openid-client registers a confidential client that then does everything a configured one does", async () => {
    const config = await client.dynamicClientRegistration(
      new URL(idp.issuer),
      {
        redirect_uris: [REDIRECT_URI],
        post_logout_redirect_uris: ["http://127.0.0.1:3000/logged-out"],
        grant_types: ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: "client_secret_post",
        client_name: "Registered in a test",
      },
      undefined,
      insecure,
    );
    const meta = config.clientMetadata() as unknown as Registered;
    expect(meta.client_id).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(meta.client_secret).toBeTruthy();
    expect(meta.client_secret_expires_at).toBe(0);
    expect(meta.registration_client_uri).toBe(`${idp.issuer}/register/${meta.client_id}`);
    expect(meta.response_types).toEqual(["code"]);

    // Code flow and refresh (a fresh configuration: openid-client's own does not validate ID tokens against /jwks here).
    const rp = await rpFor(idp.issuer, meta, client.ClientSecretPost(meta.client_secret!));
    const { tokens, claims } = await codeFlow(rp, { scope: "openid email offline_access" });
    expect(claims.aud).toBe(meta.client_id);
    const refreshed = await client.refreshTokenGrant(rp, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();

    // Introspection and revocation with the registered client's credentials.
    const creds = { client_id: meta.client_id, client_secret: meta.client_secret! };
    const active = await postForm(`${idp.issuer}/introspect`, { ...creds, token: refreshed.access_token });
    expect(active.body).toMatchObject({ active: true, client_id: meta.client_id });
    expect((await postForm(`${idp.issuer}/revoke`, { ...creds, token: refreshed.access_token })).status).toBe(200);
    expect((await postForm(`${idp.issuer}/introspect`, { ...creds, token: refreshed.access_token })).body).toEqual({ active: false });
    // Its registered method only (RFC 7591 §2): Basic is refused.
    expect((await postForm(`${idp.issuer}/introspect`, { token: "x" }, { authorization: basicAuth(meta.client_id, meta.client_secret!) })).status).toBe(401);

    // Logout to its registered post-logout URI, named by client_id or by a hint issued to it.
    for (const query of [`client_id=${meta.client_id}&`, `id_token_hint=${tokens.id_token}&`]) {
      const res = await fetch(`${idp.issuer}/end-session?${query}post_logout_redirect_uri=${encodeURIComponent("http://127.0.0.1:3000/logged-out")}`, {
        redirect: "manual",
      });
      expect(res.status, query).toBe(302);
      expect(res.headers.get("location")).toBe("http://127.0.0.1:3000/logged-out");
    }
  });

  it("a registered client's post-logout URI needs its client_id or a hint issued to it: anyone may register one", async () => {
    const bye = "https://registered-rp.example/bye";
    const { status, body } = await register(idp.issuer, {
      redirect_uris: [REDIRECT_URI],
      post_logout_redirect_uris: [bye],
      token_endpoint_auth_method: "none",
    });
    expect(status).toBe(201);
    const logout = (query: Record<string, string>) =>
      fetch(`${idp.issuer}/end-session?` + new URLSearchParams({ ...query, post_logout_redirect_uri: bye }), { redirect: "manual" });
    // Without either, it would be an open redirect for whoever registered it.
    const bare = await logout({});
    expect(bare.status).toBe(400);
    expect(bare.headers.get("location")).toBeNull();
    expect((await logout({ client_id: body.client_id })).headers.get("location")).toBe(bye);
    const { tokens } = await codeFlow(await rpFor(idp.issuer, body, client.None()), { pkce: "S256" });
    const hinted = await logout({ id_token_hint: tokens.id_token! });
    expect(hinted.status).toBe(302);
    expect(hinted.headers.get("location")).toBe(bye);
  });

  it("a public client (token_endpoint_auth_method none) gets no secret and signs in with PKCE", async () => {
    const { status, body } = await register(idp.issuer, { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", application_type: "web" });
    expect(status).toBe(201);
    expect(body.client_secret).toBeUndefined();
    const rp = await rpFor(idp.issuer, body, client.None());
    const { claims } = await codeFlow(rp, { pkce: "S256" });
    expect(claims.aud).toBe(body.client_id);
  });

  it("RFC 7592: read, update and delete with the registration access token", async () => {
    const created = await register(idp.issuer, { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", client_name: "v1" });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toContain("no-store");
    const reg = created.body as Registered;

    expect(await (await fetch(`${idp.base}/debug/ui`)).text()).toContain(reg.client_id); // listed for test authors
    const read = await manage(reg.registration_client_uri, "GET", reg.registration_access_token);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ client_id: reg.client_id, client_name: "v1", redirect_uris: [REDIRECT_URI] });

    // A wrong token, no token, another client's URI: 401 invalid_token with a Bearer challenge.
    for (const [uri, token] of [[reg.registration_client_uri, "not-the-token"], [`${idp.issuer}/register/unknown-client`, reg.registration_access_token]]) {
      const refused = await manage(uri!, "GET", token!);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toBe("invalid_token");
      expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    }
    expect((await fetch(reg.registration_client_uri)).status).toBe(401);

    // Update: the redirect URIs are replaced.
    const NEW_REDIRECT = "http://127.0.0.1:4555/new-callback";
    const updated = await manage(reg.registration_client_uri, "PUT", reg.registration_access_token, {
      client_id: reg.client_id,
      redirect_uris: [NEW_REDIRECT],
      token_endpoint_auth_method: "none",
      client_name: "v2",
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ client_id: reg.client_id, client_name: "v2", redirect_uris: [NEW_REDIRECT] });
    const rp = await rpFor(idp.issuer, updated.body, client.None());
    const oldUri = await getAuthorize((await authRequest(rp, { redirectUri: "http://localhost:3000/callback" })).url);
    expect(oldUri.status).toBe(400);
    await oldUri.arrayBuffer();
    const newUri = await getAuthorize((await authRequest(rp, { redirectUri: NEW_REDIRECT })).url);
    expect(newUri.status).toBe(200);
    await newUri.arrayBuffer();

    // Updates the RFC refuses.
    for (
      const body of [
        { client_id: "another", redirect_uris: [NEW_REDIRECT] },
        { redirect_uris: [NEW_REDIRECT] },
        { client_id: reg.client_id, redirect_uris: [NEW_REDIRECT], registration_access_token: "x" },
        { client_id: reg.client_id, redirect_uris: [NEW_REDIRECT], client_secret: "a-guess" },
      ]
    ) {
      const refused = await manage(reg.registration_client_uri, "PUT", reg.registration_access_token, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe("invalid_request");
    }
    const invalid = await manage(reg.registration_client_uri, "PUT", reg.registration_access_token, { client_id: reg.client_id, redirect_uris: ["/relative"] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toBe("invalid_redirect_uri");
    expect((await manage(reg.registration_client_uri, "GET", reg.registration_access_token)).body.client_name).toBe("v2");

    // Delete: gone for management, authorization and tokens alike.
    const deleted = await manage(reg.registration_client_uri, "DELETE", reg.registration_access_token);
    expect(deleted.status).toBe(204);
    expect((await manage(reg.registration_client_uri, "GET", reg.registration_access_token)).status).toBe(401);
    const gone = await getAuthorize((await authRequest(rp, { redirectUri: NEW_REDIRECT })).url);
    expect(gone.status).toBe(400);
    await gone.arrayBuffer();
    expect((await postForm(`${idp.issuer}/token`, { grant_type: "authorization_code", code: "x", client_id: reg.client_id })).status).toBe(401);
  });

  it("refuses metadata RFC 7591 §2 / OIDC Registration §2 rule out, with the §3.2.2 codes", async () => {
    const cases: [unknown, string][] = [
      [{}, "invalid_redirect_uri"], // the code grant needs redirect URIs
      [{ redirect_uris: ["http://127.0.0.1:3000/cb#fragment"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["/callback"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["http://app.example.com/callback"] }, "invalid_redirect_uri"], // http beyond loopback
      [{ redirect_uris: ["com.example.app:/callback"] }, "invalid_redirect_uri"], // a private-use scheme on a web client
      [{ redirect_uris: ["javascript:alert(1)"], application_type: "native" }, "invalid_redirect_uri"],
      [{ redirect_uris: "http://127.0.0.1:3000/cb" }, "invalid_redirect_uri"],
      [{ redirect_uris: [REDIRECT_URI], response_types: ["token"] }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], grant_types: ["implicit"] }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], grant_types: ["refresh_token"], response_types: ["code"] }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "tls_client_auth" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], jwks: { keys: [] }, jwks_uri: "https://rp.example.com/jwks" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], id_token_signed_response_alg: "HS256" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], post_logout_redirect_uris: ["http://evil.example.com/"] }, "invalid_client_metadata"],
      [
        { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "client_credentials"] },
        "invalid_client_metadata",
      ],
      [{ redirect_uris: [REDIRECT_URI], redirect_uri_patterns: ["https://*.preview.example.com/cb"] }, "invalid_client_metadata"], // open registration
      // What the provider itself connects to: logout tokens beyond loopback only for an operator's client, keys from loopback only.
      [{ redirect_uris: [REDIRECT_URI], backchannel_logout_uri: "https://internal.example.com/logout" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "private_key_jwt", jwks_uri: "https://rp.example.com/jwks" }, "invalid_client_metadata"],
      // Bounded, since anyone may register: more than 16 KiB of metadata.
      [{ redirect_uris: [REDIRECT_URI], contacts: Array.from({ length: 40 }, (_, i) => `${i}${"c".repeat(500)}@rp.example.com`) }, "invalid_client_metadata"],
      [[REDIRECT_URI], "invalid_client_metadata"],
      ["{not json", "invalid_client_metadata"],
    ];
    for (const [metadata, error] of cases) {
      const { status, headers, body } = await register(idp.issuer, metadata);
      expect(status, JSON.stringify(metadata)).toBe(400);
      expect(body.error, JSON.stringify(metadata)).toBe(error);
      expect(body.error_description).toBeTruthy();
      expect(headers.get("cache-control")).toContain("no-store");
    }
    const form = await postForm(`${idp.issuer}/register`, { redirect_uris: REDIRECT_URI });
    expect(form.status).toBe(400);
    expect(form.body.error).toBe("invalid_request");
  });

  it("accepts a native app's reverse-domain scheme and ignores unknown metadata", async () => {
    const { status, body } = await register(idp.issuer, {
      redirect_uris: ["com.example.app:/oauth2redirect"],
      application_type: "native",
      token_endpoint_auth_method: "none",
      made_up_field: "ignored",
    });
    expect(status).toBe(201);
    expect(body.made_up_field).toBeUndefined();
    expect(body.application_type).toBe("native");
  });

  it("a registered browser client's origin gets CORS answers, as a configured client's does", async () => {
    const origin = "https://spa.registered.example";
    const cors = async () =>
      (await fetch(`${idp.issuer}/.well-known/openid-configuration`, { headers: { origin } })).headers.get("access-control-allow-origin");
    const tokenCall = () =>
      fetch(`${idp.issuer}/token`, {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=authorization_code&code=x&client_id=dev-client",
      });
    expect(await cors()).toBeNull();
    expect((await tokenCall()).status).toBe(403);
    const { status } = await register(idp.issuer, { redirect_uris: [`${origin}/callback`], token_endpoint_auth_method: "none" });
    expect(status).toBe(201);
    expect(await cors()).toBe(origin);
    const token = await tokenCall();
    expect(token.status).toBe(400); // an unknown code, no longer a refused origin
    expect(token.headers.get("access-control-allow-origin")).toBe(origin);
  });

  it("a registered back-channel logout URI is told when the session ends", async () => {
    const receiver = await logoutReceiver();
    try {
      const { body } = await register(idp.issuer, { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", backchannel_logout_uri: receiver.url });
      const { tokens, cookie, claims } = await codeFlow(await rpFor(idp.issuer, body, client.None()));
      const res = await fetch(`${idp.issuer}/end-session?` + new URLSearchParams({ id_token_hint: tokens.id_token! }), { headers: { cookie: cookie! } });
      expect(res.status).toBe(200);
      await res.text();
      await expect.poll(() => receiver.tokens.length, { timeout: 10_000 }).toBe(1);
      const payload = JSON.parse(atob(receiver.tokens[0]!.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
      expect(payload).toMatchObject({ aud: body.client_id, sid: claims.sid, sub: claims.sub });
    } finally {
      await receiver.close();
    }
  });

  it("issuers by path keep their registered clients apart", async () => {
    const { status, body } = await register(`${idp.base}/tenant-a`, { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" });
    expect(status).toBe(201);
    expect(body.registration_client_uri).toBe(`${idp.base}/tenant-a/register/${body.client_id}`);
    const query = `client_id=${body.client_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=openid`;
    const own = await getAuthorize(`${idp.base}/tenant-a/authorize?${query}`);
    expect(own.status).toBe(200);
    await own.arrayBuffer();
    for (const other of [idp.base, `${idp.base}/tenant-b`]) {
      const res = await getAuthorize(`${other}/authorize?${query}`);
      expect(res.status, other).toBe(400);
      await res.arrayBuffer();
    }
    expect((await manage(`${idp.base}/register/${body.client_id}`, "GET", body.registration_access_token)).status).toBe(401);
  });
});

describe("registration with an initial access token, and preview redirect URIs", () => {
  const idp = useProvider({
    IDP_REGISTRATION: "token",
    IDP_REGISTRATION_TOKEN: INITIAL_TOKEN,
    IDP_PREVIEW_REDIRECT_URIS: "https://pr-7.preview.example.com/callback,https://*.branches.example.com/callback",
  });

  it("refuses a registration without the initial access token, or with a wrong one", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong-initial-access-token" }] as Record<string, string>[]) {
      const { status, body, headers: h } = await register(idp.issuer, { redirect_uris: [REDIRECT_URI] }, headers);
      expect(status).toBe(401);
      expect(body.error).toBe("invalid_token");
      expect(h.get("www-authenticate")).toMatch(/^Bearer /);
    }
  });

  it("openid-client registers with it, and such a client may have redirect URI patterns", async () => {
    const config = await client.dynamicClientRegistration(
      new URL(idp.issuer),
      {
        redirect_uris: [REDIRECT_URI],
        redirect_uri_patterns: ["https://*.preview.example.com/callback"],
        token_endpoint_auth_method: "none",
      } as Partial<client.ClientMetadata>,
      client.None(),
      { ...insecure, initialAccessToken: INITIAL_TOKEN },
    );
    const rp = await rpFor(idp.issuer, config.clientMetadata() as unknown as Registered, client.None());
    const { callback } = await interactiveLogin((await authRequest(rp, { redirectUri: "https://feature-x.preview.example.com/callback" })).url, "alice");
    expect(callback.origin).toBe("https://feature-x.preview.example.com");
    for (const uri of ["https://a.b.preview.example.com/callback", "https://feature-x.preview.example.com/other", "http://x.preview.example.com/callback"]) {
      const res = await getAuthorize((await authRequest(rp, { redirectUri: uri })).url);
      expect(res.status, uri).toBe(400);
      await res.arrayBuffer();
    }
    const bad = await register(idp.issuer, { redirect_uris: [REDIRECT_URI], redirect_uri_patterns: ["https://*.vercel.app/callback"] }, {
      authorization: `Bearer ${INITIAL_TOKEN}`,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_redirect_uri");
    // An operator's client may have a back-channel logout URI beyond loopback (open registration may not).
    const logout = await register(idp.issuer, { redirect_uris: [REDIRECT_URI], backchannel_logout_uri: "https://rp.example.com/logout" }, {
      authorization: `Bearer ${INITIAL_TOKEN}`,
    });
    expect(logout.status, JSON.stringify(logout.body)).toBe(201);
    expect(logout.body.backchannel_logout_uri).toBe("https://rp.example.com/logout");
  });

  it("IDP_PREVIEW_REDIRECT_URIS adds a preview URI and a pattern to the configured client, keeping its others", async () => {
    const rp = await client.discovery(new URL(idp.issuer), "dev-client", undefined, client.None(), insecure);
    for (const uri of [REDIRECT_URI, "https://pr-7.preview.example.com/callback", "https://pr-8.branches.example.com/callback"]) {
      const res = await getAuthorize((await authRequest(rp, { redirectUri: uri })).url);
      expect(res.status, uri).toBe(200);
      await res.arrayBuffer();
    }
    for (const uri of ["https://pr-8.preview.example.com/callback", "https://x.pr-8.branches.example.com/callback"]) {
      const res = await getAuthorize((await authRequest(rp, { redirectUri: uri })).url);
      expect(res.status, uri).toBe(400);
      await res.arrayBuffer();
    }
  });
});

describe("registration off", () => {
  const idp = useProvider({ IDP_REGISTRATION: "off" });

  it("is not advertised and refuses registrations", async () => {
    const { body } = await getJson(`${idp.issuer}/.well-known/openid-configuration`);
    expect(body.registration_endpoint).toBeUndefined();
    const refused = await register(idp.issuer, { redirect_uris: [REDIRECT_URI] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("access_denied");
    expect((await rejection(client.dynamicClientRegistration(new URL(idp.issuer), { redirect_uris: [REDIRECT_URI] }, undefined, insecure))).message)
      .toBeTruthy();
  });
});
