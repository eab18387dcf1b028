/**
 * Fuzzing the identity provider: its endpoints' parameters as docs/idp.md gives them (form-encoded
 * token, authorize, device, revocation, introspection, end-session, userinfo, and the JSON of
 * POST /debug/scenarios), with valid values mixed with mutations (see fuzz.ts): missing, repeated
 * and unknown parameters, wrong and hostile values, broken percent-encoding, other content types
 * and credentials. Invariants, for every case:
 * - never a 5xx; a method an endpoint does not serve is 405 with Allow (or a cross-site 403);
 * - the OAuth endpoints answer errors as `{error, error_description?}` JSON with a documented
 *   code (and `Cache-Control: no-store`); the browser endpoints as a page, or a redirect;
 * - a redirect never goes to a URI that is not registered;
 * - nothing is stored on a refusal (a 4xx, or an error redirect): the debug counts and the login
 *   page's scenarios are unchanged;
 * - /healthz answers;
 * - a scenario the debug interface accepted can sign in: its code flow never ends in a 5xx (a
 *   deeply nested claim once made the token endpoint fail).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { type RunningService, startService } from "../runtimes/service.ts";
import {
  check,
  deepValue,
  encodePathSegment,
  expectAnswered,
  type FuzzRequest,
  type FuzzResponse,
  nastyString,
  nestedText,
  RawJson,
  refusedByServer,
  runs,
  send,
  START_MS,
  toJsonText,
  utf8,
} from "./fuzz.ts";

const REDIRECT_URI = "http://127.0.0.1:3000/callback";
const WEB_APP_SECRET = "web-app-secret";
/** Redirect targets no client registered: a redirect there would be an open redirect. */
const UNREGISTERED = ["http://evil.example/cb", `${REDIRECT_URI}/`, "http://127.0.0.1:3001/callback", `${REDIRECT_URI}x`];

let idp: RunningService;

beforeAll(async () => {
  idp = await startService("idp", { env: { IDP_ISSUER: "{origin}" }, timeoutMs: START_MS });
});
afterAll(() => idp?.stop());

const OAUTH_ERRORS = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "invalid_dpop_proof",
  "use_dpop_nonce",
  "authorization_pending",
  "slow_down",
  "access_denied",
  "expired_token",
  "invalid_target",
  "unsupported_token_type",
  "invalid_token",
];

// ---------------------------------------------------------------------------------------------
// Parameters

const clientId = fc.constantFrom("dev-client", "web-app", "public-spa", "no-such-client");
const redirectUri = fc.constantFrom(REDIRECT_URI, ...UNREGISTERED);
const scope = fc.constantFrom("openid", "openid profile email", "openid offline_access", "profile", "openid admin", "");
const token = fc.oneof(fc.string({ minLength: 1, maxLength: 43 }), fc.constant("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."), fc.constant("a.b.c"));

const PARAMS: Record<string, fc.Arbitrary<string>> = {
  grant_type: fc.constantFrom(
    "authorization_code",
    "refresh_token",
    "client_credentials",
    "urn:ietf:params:oauth:grant-type:device_code",
    "urn:ietf:params:oauth:grant-type:token-exchange",
    "password",
  ),
  client_id: clientId,
  client_secret: fc.constantFrom(WEB_APP_SECRET, "wrong", ""),
  code: token,
  redirect_uri: redirectUri,
  code_verifier: fc.constantFrom("x".repeat(43), "short", "~".repeat(128)),
  refresh_token: token,
  device_code: token,
  scope,
  subject_token: token,
  subject_token_type: fc.constantFrom("urn:ietf:params:oauth:token-type:access_token", "urn:ietf:params:oauth:token-type:id_token", "x"),
  actor_token: token,
  audience: fc.constantFrom("api", "web-app", ""),
  resource: fc.constantFrom("https://api.example.test", "not a uri"),
  token,
  token_type_hint: fc.constantFrom("access_token", "refresh_token", "x"),
  response_type: fc.constantFrom("code", "token", "code id_token"),
  response_mode: fc.constantFrom("query", "fragment", "form_post", "x"),
  state: fc.string({ maxLength: 10 }),
  nonce: fc.string({ maxLength: 10 }),
  code_challenge: fc.constantFrom("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "short", ""),
  code_challenge_method: fc.constantFrom("S256", "plain", "md5"),
  prompt: fc.constantFrom("none", "login", "consent", "bogus"),
  max_age: fc.constantFrom("0", "60", "-1", "1e9", "x"),
  login_hint: fc.constantFrom("alice", ""),
  login: fc.constantFrom("alice", "bob", "fuzz-user", ""),
  password: fc.constantFrom("", "pw", "wrong"),
  quick_login: fc.constantFrom("alice", "userinfo-500"),
  user_code: fc.constantFrom("ABCD-EFGH", "abcd efgh", "0000-0000", ""),
  action: fc.constantFrom("approve", "deny", "x"),
  id_token_hint: fc.constantFrom("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "not-a-jwt"),
  post_logout_redirect_uri: fc.constantFrom("http://127.0.0.1:3000/", "http://127.0.0.1:8080/", ...UNREGISTERED),
};

interface Endpoint {
  method: "GET" | "POST";
  path: string;
  params: string[];
  /** JSON OAuth errors (token, device authorization, introspection, revocation). */
  oauth?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  {
    method: "POST",
    path: "/token",
    oauth: true,
    params: [
      "grant_type",
      "client_id",
      "client_secret",
      "code",
      "redirect_uri",
      "code_verifier",
      "refresh_token",
      "device_code",
      "scope",
      "subject_token",
      "subject_token_type",
      "actor_token",
      "audience",
      "resource",
    ],
  },
  { method: "POST", path: "/device_authorization", oauth: true, params: ["client_id", "client_secret", "scope"] },
  { method: "POST", path: "/revoke", oauth: true, params: ["token", "token_type_hint", "client_id", "client_secret"] },
  { method: "POST", path: "/introspect", oauth: true, params: ["token", "token_type_hint", "client_id", "client_secret"] },
  {
    method: "GET",
    path: "/authorize",
    params: [
      "client_id",
      "redirect_uri",
      "response_type",
      "response_mode",
      "scope",
      "state",
      "nonce",
      "code_challenge",
      "code_challenge_method",
      "prompt",
      "max_age",
      "login_hint",
    ],
  },
  {
    method: "POST",
    path: "/authorize",
    params: [
      "client_id",
      "redirect_uri",
      "response_type",
      "scope",
      "state",
      "nonce",
      "code_challenge",
      "code_challenge_method",
      "prompt",
      "login",
      "password",
      "quick_login",
    ],
  },
  { method: "GET", path: "/device", params: ["user_code"] },
  { method: "POST", path: "/device", params: ["user_code", "action", "login", "password"] },
  { method: "GET", path: "/end-session", params: ["id_token_hint", "post_logout_redirect_uri", "client_id", "state"] },
  { method: "POST", path: "/end-session", params: ["id_token_hint", "post_logout_redirect_uri", "client_id", "state"] },
  { method: "GET", path: "/userinfo", params: [] },
  { method: "POST", path: "/userinfo", params: [] },
];

/** A parameter's value: valid most of the time, hostile otherwise. */
const value = (name: string) =>
  fc.oneof(
    { weight: 5, arbitrary: PARAMS[name] ?? fc.string({ maxLength: 8 }) },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.constantFrom("x".repeat(100_000), nestedText(5000), "%zz", "%ff%fe") },
  );

/** Raw form text: URL-encoded pairs, plus what URLSearchParams would never write. */
type FormMutation = "none" | "repeat" | "unknown" | "bad-escape" | "invalid-utf8" | "no-equals";

function formText(pairs: [string, string][], m: FormMutation): string {
  const text = new URLSearchParams(pairs).toString();
  switch (m) {
    case "none":
      return text;
    case "repeat":
      return pairs.length ? `${text}&${new URLSearchParams([pairs[0]!]).toString()}` : text;
    case "unknown":
      return `${text}&unknown_param=1&__proto__=x`;
    case "bad-escape":
      return `${text}&state=%zz%`;
    case "invalid-utf8":
      return `${text}&state=%ff%c3%28`;
    case "no-equals":
      return `${text}&&=&grant_type`;
  }
}

const AUTH_HEADERS = fc.constantFrom<Record<string, string>>(
  {},
  { authorization: `Basic ${btoa(`web-app:${WEB_APP_SECRET}`)}` },
  { authorization: `Basic ${btoa("web-app:wrong")}` },
  { authorization: "Basic !!!not-base64" },
  { authorization: `Basic ${btoa("no-colon")}` },
  { authorization: "Bearer x" },
  { authorization: "DPoP x", dpop: "not-a-jwt" },
  { dpop: "a.b.c" },
  { cookie: "idp_session=garbage" },
  { origin: "http://evil.example" },
);

const CONTENT_TYPES = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/x-www-form-urlencoded") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("application/json", "text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded; charset=utf-16", ""),
  },
);

function formRequest(e: Endpoint): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      present: fc.subarray(e.params),
      values: fc.record(Object.fromEntries(e.params.map((p) => [p, value(p)]))),
      mutation: fc.constantFrom<FormMutation>("none", "none", "none", "repeat", "unknown", "bad-escape", "invalid-utf8", "no-equals"),
      headers: AUTH_HEADERS,
      type: CONTENT_TYPES,
      method: fc.option(fc.constantFrom("PUT", "DELETE", "PATCH", "TRACE", "OPTIONS"), { freq: 15 }),
      jsonBody: fc.option(deepValue, { freq: 15 }),
    })
    .map(({ present, values, mutation, headers, type, method, jsonBody }) => {
      const pairs = present.map((p) => [p, (values as Record<string, string>)[p]!] as [string, string]);
      const text = formText(pairs, mutation);
      const label = `${method ?? e.method} ${e.path} (${mutation}${jsonBody ? ", JSON body" : ""})`;
      if (e.method === "GET") {
        return { method: method ?? "GET", path: `${e.path}${text ? `?${text}` : ""}`, headers, label };
      }
      const body = jsonBody ? utf8(toJsonText({ grant_type: "client_credentials", x: jsonBody })) : utf8(text);
      return {
        method: method ?? "POST",
        path: e.path,
        headers: { ...headers, ...(type && { "content-type": jsonBody ? "application/json" : type }) },
        body,
        label,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// POST /debug/scenarios

const scenarioFields = {
  login: fc.oneof(fc.constantFrom("fuzz-a", "fuzz-b", " fuzz-c ", "alice"), nastyString),
  password: fc.constantFrom("pw", ""),
  email: fc.constantFrom("a@example.test", "not-an-email"),
  name: fc.string({ maxLength: 10 }),
  groups: fc.oneof(fc.constant(["g"]), fc.constant("g")),
  roles: fc.constant(["r"]),
  email_verified: fc.oneof(fc.boolean(), fc.constant("yes")),
  claims: fc.oneof(
    {
      weight: 3,
      arbitrary: fc.dictionary(fc.constantFrom("dept", "level", "tags"), fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant([1, [2]]))),
    },
    { weight: 2, arbitrary: deepValue.map((deep) => ({ deep })) },
    { weight: 1, arbitrary: fc.constantFrom([], "x", null, [1]) },
  ),
  category: fc.string({ maxLength: 8 }),
  unknown_field: fc.constant(1),
};

const scenarioRequest: fc.Arbitrary<FuzzRequest> = fc
  .record(scenarioFields, { requiredKeys: [] })
  .chain((body) => fc.record({ body: fc.constant(body), bodyShape: fc.constantFrom("object", "object", "object", "array", "deep", "garbage") }))
  .map(({ body, bodyShape }) => {
    const text = bodyShape === "object"
      ? toJsonText(body)
      : bodyShape === "array"
      ? toJsonText([body])
      : bodyShape === "deep"
      ? toJsonText({ login: "deep", claims: new RawJson(nestedText(20_000, "object")) })
      : "{login:";
    return {
      method: "POST",
      path: "/debug/scenarios",
      headers: { "content-type": "application/json" },
      body: utf8(text),
      label: `POST /debug/scenarios (${bodyShape})`,
    };
  });

// ---------------------------------------------------------------------------------------------
// Invariants

/** Stored state a refusal must leave alone: the debug counts (DPoP replay entries aside) and the
 * scenarios offered on the login page. */
async function fingerprint(): Promise<string> {
  const debug = (await send(idp.baseUrl, { method: "GET", path: "/debug", headers: {} })).json as { counts: Record<string, number> };
  const { replay_entries: _replay, ...counts } = debug.counts;
  const page = await send(idp.baseUrl, {
    method: "GET",
    path: `/authorize?${new URLSearchParams({ client_id: "dev-client", redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid" })}`,
    headers: {},
  });
  return JSON.stringify([counts, page.text.match(/data-login="[^"]*"/g)?.sort()]);
}

function checkRedirect(req: FuzzRequest, res: FuzzResponse): void {
  const location = res.headers.location as string | undefined;
  if (!location) return;
  const target = new URL(location, idp.baseUrl);
  const where = `${req.label}: ${res.status} to ${location}`;
  for (const bad of UNREGISTERED) {
    const b = new URL(bad);
    expect(target.origin + target.pathname === b.origin + b.pathname, `${where}: an unregistered redirect URI`).toBe(false);
  }
}

/** A refusal: a 4xx, or a redirect that carries an OAuth error. */
function refused(res: FuzzResponse): boolean {
  if (res.status >= 400) return true;
  const location = res.headers.location as string | undefined;
  return location !== undefined && /[?&#]error=/.test(location);
}

/** The methods each endpoint path serves (OPTIONS aside: a CORS preflight may answer it). */
const SERVED = new Map<string, string[]>();
for (const e of ENDPOINTS) SERVED.set(e.path, [...(SERVED.get(e.path) ?? []), e.method]);

function checkAnswer(e: Endpoint | "scenarios", req: FuzzRequest, res: FuzzResponse): void {
  const where = `${req.label}: ${res.status} ${res.text.slice(0, 300)}`;

  expectAnswered(req, res);
  if (res.status === 0) return;
  expect(res.status, where).toBeLessThan(500);
  checkRedirect(req, res);
  if (refusedByServer(res)) return;
  const served = e === "scenarios" ? undefined : SERVED.get(req.path.split("?")[0]!);
  if (served && req.method !== "OPTIONS" && !served.includes(req.method) && !(req.method === "HEAD" && served.includes("GET"))) {
    // A cross-site request may be refused (403) before the method is looked at.
    const crossSite = req.headers.origin !== undefined && res.status === 403;
    if (!crossSite) {
      expect(res.status, `${where}: a method the endpoint does not serve`).toBe(405);
      expect(res.headers.allow, where).toBeTruthy();
    }
  }
  if (res.status < 400) return;
  const type = String(res.headers["content-type"] ?? "");
  if (res.status === 404) {
    expect((res.json as { error?: { code?: string } })?.error?.code, where).toBe("NOT_FOUND");
    return;
  }
  if (e === "scenarios") {
    expect(res.status, where).toBe(400);
    expect((res.json as { error?: string })?.error, where).toBe("invalid_request");
    return;
  }
  if (e.oauth || res.status === 405) {
    expect(type, where).toMatch(/^application\/json/);
    const body = res.json as { error?: unknown; error_description?: unknown };
    expect(typeof body?.error, where).toBe("string");
    expect(OAUTH_ERRORS, where).toContain(body.error);
    expect(Object.keys(body).every((k) => ["error", "error_description", "error_uri"].includes(k)), where).toBe(true);
    if (res.status !== 405) expect(String(res.headers["cache-control"]), where).toMatch(/no-store/);
    return;
  }
  // Browser endpoints: a page; /userinfo: a JSON error with a challenge.
  if (e.path === "/userinfo") {
    expect(res.status, where).toBe(401);
    expect(res.headers["www-authenticate"], where).toBeTruthy();
  } else {
    expect(type, where).toMatch(/^text\/html|^application\/json/);
  }
}

/** Signs a scenario in through the code flow (web-app, no PKCE): every step below 500. */
async function signIn(login: string, password: string | undefined): Promise<void> {
  const form = new URLSearchParams({
    client_id: "web-app",
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid profile email",
    state: "s",
    login,
    password: password ?? "",
  });
  const res = await send(idp.baseUrl, {
    method: "POST",
    path: "/authorize",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: utf8(form.toString()),
  });
  expect(res.status, `sign-in as ${JSON.stringify(login)}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
  const code = res.headers.location && new URL(res.headers.location as string).searchParams.get("code");
  if (!code) return;
  const grant = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI });
  const tokens = await send(idp.baseUrl, {
    method: "POST",
    path: "/token",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`web-app:${WEB_APP_SECRET}`)}` },
    body: utf8(grant.toString()),
  });
  expect(tokens.status, `token for ${JSON.stringify(login)}: ${tokens.text.slice(0, 300)}`).toBe(200);
  const access = (tokens.json as { access_token: string }).access_token;
  const info = await send(idp.baseUrl, { method: "GET", path: "/userinfo", headers: { authorization: `Bearer ${access}` } });
  expect(info.status, `userinfo for ${JSON.stringify(login)}: ${info.text.slice(0, 300)}`).toBeLessThan(500);
}

describe("the identity provider's endpoints, fuzzed", () => {
  it("never a 5xx, documented errors, no open redirect, nothing stored on a refusal, always healthy", async () => {
    const arbitrary = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...ENDPOINTS).chain((e) => formRequest(e).map((req) => ({ e: e as Endpoint | "scenarios", req }))) },
      { weight: 2, arbitrary: scenarioRequest.map((req) => ({ e: "scenarios" as const, req })) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...ENDPOINTS).chain((e) =>
          nastyString.map((junk) => ({
            e: e as Endpoint | "scenarios",
            req: { method: e.method, path: `${e.path}/${encodePathSegment(junk)}`, headers: {}, label: `${e.method} ${e.path}/<junk>` } as FuzzRequest,
          }))
        ),
      },
    );
    await check("idp", arbitrary, runs(250), async ({ e, req }) => {
      const before = await fingerprint();
      const res = await send(idp.baseUrl, req);
      checkAnswer(e, req, res);
      if (refused(res)) expect(await fingerprint(), `${req.label}: ${res.status} ${res.text.slice(0, 200)} changed stored state`).toBe(before);
      if (e === "scenarios" && res.status === 201) {
        const created = res.json as { login: string };
        const sent = JSON.parse(new TextDecoder().decode(req.body)) as { password?: string };
        await signIn(created.login, sent.password);
      }
      expect((await send(idp.baseUrl, { method: "GET", path: "/healthz", headers: {} })).status, `${req.label}: unhealthy afterwards`).toBe(200);
    });
  });
});
