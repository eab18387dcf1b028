/**
 * The identity provider's fuzz cases (idp.fuzz.test.ts runs them): its endpoints and their
 * parameters as docs/idp.md gives them, the request generators (form-encoded parameters, valid
 * values mixed with mutations, other content types and credentials; the JSON of POST
 * /debug/scenarios) and the checks of an answer (status, documented errors, no open redirect).
 * Not a test file.
 */
import { expect } from "vitest";
import fc from "fast-check";
import { deepValue, expectAnswered, type FuzzRequest, type FuzzResponse, nastyString, nestedText, RawJson, refusedByServer, toJsonText, utf8 } from "./fuzz.ts";

export const REDIRECT_URI = "http://127.0.0.1:3000/callback";
export const WEB_APP_SECRET = "web-app-secret";
/** Redirect targets no client registered: a redirect there would be an open redirect. */
const UNREGISTERED = ["http://evil.example/cb", `${REDIRECT_URI}/`, "http://127.0.0.1:3001/callback", `${REDIRECT_URI}x`];

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
  claims: fc.constantFrom('{"id_token":{"acr":{"essential":true,"values":["mfa"]}}}', '{"userinfo":{"acr":null}}', "[]", "{", '{"id_token":[1]}'),
  acr_values: fc.constantFrom("mfa", "pwd gold", ""),
  acr: fc.constantFrom("pwd", "mfa", "gold", ""),
  login: fc.constantFrom("alice", "bob", "fuzz-user", ""),
  password: fc.constantFrom("", "pw", "wrong"),
  quick_login: fc.constantFrom("alice", "userinfo-500"),
  user_code: fc.constantFrom("ABCD-EFGH", "abcd efgh", "0000-0000", ""),
  action: fc.constantFrom("approve", "deny", "x"),
  id_token_hint: fc.constantFrom("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "not-a-jwt"),
  post_logout_redirect_uri: fc.constantFrom("http://127.0.0.1:3000/", "http://127.0.0.1:8080/", ...UNREGISTERED),
};

export interface Endpoint {
  method: "GET" | "POST";
  path: string;
  params: string[];
  /** JSON OAuth errors (token, device authorization, introspection, revocation). */
  oauth?: boolean;
}

export const ENDPOINTS: Endpoint[] = [
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
      "claims",
      "acr_values",
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
      "claims",
      "acr",
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

export function formRequest(e: Endpoint): fc.Arbitrary<FuzzRequest> {
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

export const scenarioRequest: fc.Arbitrary<FuzzRequest> = fc
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

function checkRedirect(baseUrl: string, req: FuzzRequest, res: FuzzResponse): void {
  const location = res.headers.location as string | undefined;
  if (!location) return;
  const target = new URL(location, baseUrl);
  const where = `${req.label}: ${res.status} to ${location}`;
  for (const bad of UNREGISTERED) {
    const b = new URL(bad);
    expect(target.origin + target.pathname === b.origin + b.pathname, `${where}: an unregistered redirect URI`).toBe(false);
  }
}

/** A refusal: a 4xx, or a redirect that carries an OAuth error. */
export function refused(res: FuzzResponse): boolean {
  if (res.status >= 400) return true;
  const location = res.headers.location as string | undefined;
  return location !== undefined && /[?&#]error=/.test(location);
}

/** The methods each endpoint path serves (OPTIONS aside: a CORS preflight may answer it). */
const SERVED = new Map<string, string[]>();
for (const e of ENDPOINTS) SERVED.set(e.path, [...(SERVED.get(e.path) ?? []), e.method]);

/** The invariants of one answer; `baseUrl` is the provider's, against which a relative redirect resolves. */
export function checkAnswer(baseUrl: string, e: Endpoint | "scenarios", req: FuzzRequest, res: FuzzResponse): void {
  const where = `${req.label}: ${res.status} ${res.text.slice(0, 300)}`;

  expectAnswered(req, res);
  if (res.status === 0) return;
  expect(res.status, where).toBeLessThan(500);
  checkRedirect(baseUrl, req, res);
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
