/**
 * `GET /debug/requests`: the requests the provider received (like navikt's `takeRequest()`),
 * secrets masked, newest last, filterable, clearable. Kept per instance: against two instances
 * (node-pair, deno-pair) the round-robin proxy sends consecutive calls to each, so the helpers
 * below ask (and clear) once per instance and merge.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  authRequest,
  basicAuth,
  client,
  codeFlow,
  INSTANCES,
  interactiveLogin,
  postForm,
  redeem,
  REDIRECT_URI,
  rp,
  useProvider,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

interface Recorded {
  id: number;
  at: string;
  method: string;
  issuer: string;
  endpoint: string;
  client_id: string | null;
  params: Record<string, string>;
  authorization?: string;
  dpop?: true;
  status: number;
  error?: string;
}

const idp = useProvider();

/** Every instance's recorded requests (one GET per instance), oldest first. */
async function requests(query = ""): Promise<Recorded[]> {
  const all: Recorded[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const res = await fetch(`${idp.base}/debug/requests${query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    all.push(...((await res.json()) as Recorded[]));
  }
  return all.sort((a, b) => a.at.localeCompare(b.at) || a.id - b.id);
}

async function clear(): Promise<void> {
  for (let i = 0; i < INSTANCES; i++) {
    const res = await fetch(`${idp.base}/debug/requests`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(typeof ((await res.json()) as { cleared: number }).cleared).toBe("number");
  }
}

beforeEach(clear);

describe("GET /debug/requests", () => {
  it("records a code flow: method, endpoint, parameters with secrets masked, client, outcome", async () => {
    const web = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const request = await authRequest(web);
    const login = await interactiveLogin(request.url, "alice", "any-password");
    const tokens = await redeem(web, login.callback, request);
    await client.fetchUserInfo(web, tokens.access_token, tokens.claims()!.sub);

    const seen = await requests();
    expect(seen.map((r) => `${r.method} ${r.endpoint} ${r.status}`)).toEqual([
      "GET /authorize 200",
      "POST /authorize 302",
      "POST /token 200",
      "GET /userinfo 200",
    ]);
    const [authorize, post, token, info] = seen;
    expect(authorize!.client_id).toBe("web-app");
    expect(authorize!.issuer).toBe(idp.issuer);
    expect(authorize!.params).toMatchObject({ client_id: "web-app", redirect_uri: REDIRECT_URI, response_type: "code", state: request.state });
    expect(authorize!.params.code_challenge).toBe(request.url.searchParams.get("code_challenge"));
    expect(post!.params.login).toBe("alice");
    expect(post!.params.password).toBe("***");

    const code = login.callback.searchParams.get("code")!;
    expect(token!.client_id).toBe("web-app");
    expect(token!.authorization).toBe("Basic web-app:***");
    expect(token!.params.grant_type).toBe("authorization_code");
    expect(token!.params.code).toBe(`${code.slice(0, 8)}…`);
    expect(token!.params.code_verifier).toBe("***");
    expect(token!.error).toBeUndefined();

    expect(info!.client_id).toBe("web-app"); // from the access token
    expect(info!.authorization).toBe(`Bearer ${tokens.access_token.slice(0, 8)}…`);
    const text = JSON.stringify(seen);
    for (const secret of [WEB_APP_SECRET, "any-password", code, tokens.access_token, request.verifier!]) expect(text).not.toContain(secret);
  });

  it("records refusals with their error: a bad code at /token, a bad bearer at /userinfo, an error sent to the redirect URI", async () => {
    await postForm(`${idp.issuer}/token`, {
      grant_type: "authorization_code",
      code: "no-such-code-123456",
      redirect_uri: REDIRECT_URI,
      client_id: "dev-client",
    });
    await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials", client_id: "web-app", client_secret: "wrong-secret" });
    await fetch(`${idp.issuer}/userinfo`, { headers: { authorization: "Bearer not-a-token-at-all" } });
    const request = await authRequest(idp.config, { params: { prompt: "none" } });
    await fetch(request.url, { redirect: "manual" });

    const seen = await requests();
    expect(seen.map((r) => [r.endpoint, r.status, r.error])).toEqual([
      ["/token", 400, "invalid_grant"],
      ["/token", 401, "invalid_client"],
      ["/userinfo", 401, "invalid_token"],
      ["/authorize", 302, "login_required"],
    ]);
    expect(seen[0]!.params.code).toBe("no-such-…");
    expect(seen[1]!.params.client_secret).toBe("***");
    expect(seen[1]!.client_id).toBe("web-app");
    expect(seen[2]!.authorization).toBe("Bearer not-a-to…");
  });

  it("filters by client and endpoint (with or without the slash), and DELETE clears", async () => {
    await codeFlow(idp.config);
    await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, { authorization: basicAuth("web-app", WEB_APP_SECRET) });
    const tokenCalls = await requests("?endpoint=token");
    expect(tokenCalls.map((r) => r.client_id)).toEqual(["dev-client", "web-app"]);
    expect(await requests("?endpoint=/token")).toHaveLength(2);
    const web = await requests("?client_id=web-app");
    expect(web.map((r) => r.endpoint)).toEqual(["/token"]);
    expect(web[0]!.params.grant_type).toBe("client_credentials");
    expect((await requests("?client_id=dev-client&endpoint=authorize")).map((r) => r.method)).toEqual(["GET", "POST"]);
    await clear();
    expect(await requests()).toEqual([]);
  });

  it("records a registration once, and hides secrets sent under another case, as a list or alone in Basic", async () => {
    const registered = await fetch(`${idp.issuer}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI], client_secret: "json-secret-1" }),
    });
    expect(registered.status).toBe(201);
    await postForm(`${idp.issuer}/token`, {
      grant_type: "client_credentials",
      client_id: "web-app",
      Client_Secret: "case-secret-2",
      "password[]": "list-secret-3",
    });
    // Basic with no colon: not a client id and a secret, perhaps the secret alone.
    await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, { authorization: `Basic ${btoa("alone-secret-4")}` });
    await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, { authorization: "odd-secret-5 x" });
    const seen = await requests();
    expect(seen.map((r) => `${r.method} ${r.endpoint}`)).toEqual(["POST /register", "POST /token", "POST /token", "POST /token"]);
    expect(seen[1]!.params).toMatchObject({ Client_Secret: "***", "password[]": "***" });
    expect(seen[2]!.authorization).toBe("Basic ***");
    expect(seen[2]!.client_id).toBeNull();
    expect(seen[3]!.authorization).toBe("***");
    const text = JSON.stringify(seen);
    for (const secret of ["json-secret-1", "case-secret-2", "list-secret-3", "alone-secret-4", "odd-secret-5"]) expect(text).not.toContain(secret);
  });

  it("does not record discovery, keys, health or the debug interface itself", async () => {
    await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    await fetch(`${idp.issuer}/jwks`);
    await fetch(`${idp.base}/healthz`);
    await fetch(`${idp.base}/debug`);
    expect(await requests()).toEqual([]);
  });

  it("answers only loopback callers, as the rest of the debug interface", async () => {
    // On workerd the caller is CF-Connecting-IP (docs/idp.md, "Debug interface"); elsewhere the socket.
    const res = await fetch(`${idp.base}/debug/requests`, { headers: { "cf-connecting-ip": "203.0.113.9" } });
    expect(res.status).toBe(process.env.TEST_RUNTIME === "workerd" ? 403 : 200);
  });
});
