/**
 * The authorization endpoint. GET decides between a silent answer (a code from the IdP session)
 * and the login page; POST takes the login form. Errors before the client and redirect URI are
 * validated are 400 pages; afterwards they go back to the client as a redirect with `error`,
 * `error_description`, `state` and `iss` (RFC 9207).
 */
import { crossSite, notFromThisSite } from "./same-origin.ts";
import type { Context, Hono } from "hono";
import { setCookie } from "hono/cookie";
import { type LoginClaims, LoginClaimsError, parseLoginClaims, type User } from "../domain/claims.ts";
import {
  ACR_VALUES,
  acrSatisfies,
  AMR_OF,
  type AuthContext,
  type ClaimsRequest,
  ClaimsRequestError,
  isAcr,
  parseClaimsRequest,
  preselectedAcr,
  requiredSub,
} from "../domain/claims-request.ts";
import { allowsGrant, type Client, isAbsoluteUrl, redirectUriAllowed } from "../domain/clients.ts";
import { unknownClientMessage, unregisteredRedirectMessage } from "../domain/client-messages.ts";
import { AuthorizeRedirectError, type AuthorizeRedirectErrorCode, PageError } from "../domain/errors.ts";
import { isScopeToken, scopeList } from "../domain/scopes.ts";
import { isPkceMethod, isWellFormedPkceValue, type PkceMethod } from "../domain/pkce.ts";
import type { Provider } from "../domain/provider.ts";
import { constantTimeEqual } from "../domain/random.ts";
import { type CodeRecord, LIFETIME_MS, type SessionRecord } from "../domain/records.ts";
import { endSessions } from "../domain/backchannel.ts";
import { grantIdInSession } from "../domain/grant-ids.ts";
import { OPENED_REQUEST_LIFETIME_MS, type PushedRequestRecord, requestUriKey, requestUriOf } from "../domain/par.ts";
import { readRequestObject, RequestObjectError } from "../domain/request-object.ts";
import { loginPage } from "../pages/login.ts";
import { currentSession, PAGE_HEADERS, type Params, readForm, samePath, secureCookies, toParams } from "./http.ts";
import { authorizationResponse, isResponseMode, type ResponseMode } from "./response-mode.ts";

/** The request parameters the login page carries as hidden inputs. */
export const AUTHORIZE_PARAMS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "scope",
  "state",
  "nonce",
  "code_challenge",
  "code_challenge_method",
  "prompt",
  "max_age",
  "login_hint",
  "dpop_jkt",
  "response_mode",
  "claims",
  "acr_values",
] as const;

interface AuthorizeRequest {
  client: Client;
  redirect_uri: string;
  response_mode: ResponseMode;
  scope: string;
  state?: string;
  nonce?: string;
  code_challenge?: string;
  code_challenge_method?: PkceMethod;
  prompt: Set<string>;
  max_age?: number;
  login_hint?: string;
  dpop_jkt?: string;
  /** The `claims` parameter (OIDC Core §5.5). */
  claims?: ClaimsRequest;
  /** `acr_values`, in order of preference (voluntary). */
  acr_values: string[];
}

/** Client and redirect URI: only once both are valid may the user agent be sent back. */
/** The 400 page for an unknown client: how to register it (at /register too, when this issuer allows it). */
function unknownClient(p: Provider, clientId: string, requestUrl: string | undefined): PageError {
  const registration = requestUrl === undefined ? undefined : { policy: p.registrationPolicy(requestUrl), endpoint: `${p.issuerFor(requestUrl)}/register` };
  return new PageError(400, "Unknown client", unknownClientMessage(clientId, registration));
}

export async function validateClient(p: Provider, params: Params, requestUrl?: string): Promise<{ client: Client; redirect_uri: string }> {
  const v = params.values;
  for (const name of ["client_id", "redirect_uri"]) {
    if (params.duplicates.includes(name)) throw new PageError(400, "Invalid request", `${name} must not be repeated`);
  }
  const clientId = v.get("client_id");
  if (!clientId) throw new PageError(400, "Invalid request", "client_id is missing");
  const client = await p.findClient(clientId);
  if (!client) throw unknownClient(p, clientId, requestUrl);
  const redirectUri = v.get("redirect_uri");
  if (!redirectUri) throw new PageError(400, "Invalid request", "redirect_uri is missing");
  // Exact string match against the client's own allowlist (no normalization, no prefixes), any
  // port for a loopback IP literal (RFC 8252 §7.3).
  if (!redirectUriAllowed(client, redirectUri)) {
    throw new PageError(400, "Invalid redirect URI", unregisteredRedirectMessage(client, redirectUri));
  }
  return { client, redirect_uri: redirectUri };
}

export function validateRest(params: Params, base: { client: Client; redirect_uri: string }): AuthorizeRequest {
  const v = params.values;
  const fail = (error: AuthorizeRedirectErrorCode, description: string) => new AuthorizeRedirectError(error, description);
  if (params.duplicates.length > 0) throw fail("invalid_request", `parameter repeated: ${params.duplicates.join(", ")}`);
  const mode = v.get("response_mode") ?? "query";
  if (!isResponseMode(mode)) throw fail("unsupported_response_mode", "response_mode must be query, fragment or form_post");
  const responseType = v.get("response_type");
  if (!responseType) throw fail("invalid_request", "response_type is missing");
  if (responseType !== "code") throw fail("unsupported_response_type", "only response_type=code is supported");
  if (!allowsGrant(base.client, "authorization_code")) throw fail("unauthorized_client", "the client may not use the authorization code grant");
  const scope = v.get("scope") ?? "";
  const scopes = scopeList(scope);
  if (!scopes.every(isScopeToken)) throw fail("invalid_scope", "scope is malformed");
  if (!scopes.includes("openid")) throw fail("invalid_scope", "scope must include openid");
  const allowed = base.client.allowed_scopes;
  if (allowed && !scopes.every((s) => allowed.has(s))) throw fail("invalid_scope", "scope not allowed for this client");
  const req: AuthorizeRequest = {
    ...base,
    response_mode: mode,
    scope: [...new Set(scopes)].join(" "),
    prompt: new Set(scopeList(v.get("prompt") ?? "")),
    acr_values: scopeList(v.get("acr_values") ?? ""),
  };
  const claims = v.get("claims");
  if (claims !== undefined) {
    try {
      req.claims = parseClaimsRequest(claims);
    } catch (err) {
      if (err instanceof ClaimsRequestError) throw fail("invalid_request", err.message);
      throw err;
    }
  }
  for (const name of ["state", "nonce", "login_hint", "dpop_jkt"] as const) {
    const value = v.get(name);
    if (value !== undefined) req[name] = value;
  }
  const challenge = v.get("code_challenge");
  const method = v.get("code_challenge_method");
  if (method !== undefined && !isPkceMethod(method)) throw fail("invalid_request", "code_challenge_method must be S256 or plain");
  if (method !== undefined && challenge === undefined) throw fail("invalid_request", "code_challenge_method without code_challenge");
  if (challenge !== undefined) {
    if (!isWellFormedPkceValue(challenge)) throw fail("invalid_request", "code_challenge must be 43 to 128 characters [A-Za-z0-9._~-]");
    req.code_challenge = challenge;
    req.code_challenge_method = (method as PkceMethod | undefined) ?? "plain";
  } else if (base.client.require_pkce) {
    throw fail("invalid_request", "this client requires PKCE (code_challenge)");
  }
  for (const prompt of req.prompt) {
    if (!["none", "login", "consent", "select_account"].includes(prompt)) throw fail("invalid_request", `unsupported prompt value "${prompt}"`);
  }
  if (req.prompt.has("none") && req.prompt.size > 1) throw fail("invalid_request", "prompt=none cannot be combined with other values");
  const maxAge = v.get("max_age");
  if (maxAge !== undefined) {
    if (!/^\d{1,10}$/.test(maxAge)) throw fail("invalid_request", "max_age must be a non-negative integer");
    req.max_age = Number(maxAge);
  }
  return req;
}

/** Issues a code for the request and the authenticated user (stored once the promise resolves). */
function issueCode(
  p: Provider,
  req: AuthorizeRequest,
  user: { login: string; sub: string; claims?: LoginClaims; sid?: string } & AuthContext,
  authTime: number,
): { code: string; stored: Promise<void> } {
  const now = p.now();
  const code = p.secret();
  const record: CodeRecord = {
    client_id: req.client.client_id,
    redirect_uri: req.redirect_uri,
    scope: p.intern(req.scope),
    login: user.login,
    sub: user.sub,
    auth_time: authTime,
    grant_id: user.sid === undefined ? p.grantId() : grantIdInSession(p.grantId(), user.sid),
    expires_at: now + LIFETIME_MS.code,
  };
  if (req.nonce !== undefined) record.nonce = req.nonce;
  if (req.code_challenge !== undefined) {
    record.code_challenge = req.code_challenge;
    record.code_challenge_method = req.code_challenge_method!;
  }
  if (req.dpop_jkt !== undefined) record.dpop_jkt = req.dpop_jkt;
  if (user.claims) record.claims = user.claims;
  if (user.sid !== undefined) record.sid = user.sid;
  if (user.acr !== undefined) record.acr = user.acr;
  if (user.amr !== undefined) record.amr = user.amr;
  if (req.claims !== undefined) record.claims_request = req.claims;
  return { code, stored: p.put("code", code, record, { pruneAt: record.expires_at }) };
}

function codeRedirect(c: Context, p: Provider, req: AuthorizeRequest, code: string): Response | Promise<Response> {
  return authorizationResponse(c, req.redirect_uri, req.response_mode, { code, state: req.state, iss: p.issuerFor(c.req.url) });
}

function errorRedirect(
  c: Context,
  p: Provider,
  redirectUri: string,
  state: string | undefined,
  err: AuthorizeRedirectError,
  mode: ResponseMode = "query",
): Response | Promise<Response> {
  return authorizationResponse(c, redirectUri, mode, { error: err.error, error_description: err.description, state, iss: p.issuerFor(c.req.url) });
}

/** The response mode an error before validation ends goes back in: the one asked for, if valid. */
function requestedMode(params: Params): ResponseMode {
  const mode = params.values.get("response_mode");
  return mode !== undefined && isResponseMode(mode) && !params.duplicates.includes("response_mode") ? mode : "query";
}

/** Does the session satisfy prompt and max_age, or must the user log in (again)? */
function needsLogin(req: AuthorizeRequest, session: SessionRecord | undefined, now: number): boolean {
  if (!session) return true;
  if (req.prompt.has("login")) return true;
  // An essential acr the session's login did not meet (OIDC Core §5.5.1.1): log in again.
  if (!acrSatisfies(session.acr, req.claims)) return true;
  // A session of another user than the `sub` asked for (§5.5.1) is never used.
  const sub = requiredSub(req.claims);
  if (sub !== undefined && session.sub !== sub) return true;
  if (req.max_age !== undefined) {
    if (req.max_age === 0) return true; // OIDC Core: max_age=0 forces a fresh login
    if (now - session.auth_time > req.max_age * 1000) return true;
  }
  return false;
}

function hiddenParams(params: Params): [string, string][] {
  return AUTHORIZE_PARAMS.flatMap((name) => {
    const value = params.values.get(name);
    return value === undefined ? [] : [[name, value] as [string, string]];
  });
}

/**
 * The parameters a request stands for, resolved: a request object (JAR) is unpacked here, so that
 * /authorize and /par (routes/par.ts) validate the same parameters by the same code.
 */
export async function resolveRequestParams(p: Provider, params: Params, requestUrl?: string): Promise<Params> {
  const jwt = params.values.get("request");
  if (jwt === undefined) return params;
  const clientId = params.values.get("client_id");
  if (!clientId) throw new PageError(400, "Invalid request", "client_id is missing (it must accompany request)");
  const client = await p.findClient(clientId);
  if (!client) throw unknownClient(p, clientId, requestUrl);
  if (params.duplicates.includes("request")) throw await earlyRefusal(p, params, "invalid_request", "request must not be repeated");
  // With an {origin} issuer and no request at hand (never at /authorize), an aud of this
  // provider's form on any origin is taken as naming it.
  const isIssuer = (aud: string) => aud === (requestUrl !== undefined ? p.issuerFor(requestUrl) : isAbsoluteUrl(aud) ? p.issuerFor(aud) : undefined);
  try {
    return { values: await readRequestObject(jwt, { client, isIssuer, now: p.now() }), duplicates: [] };
  } catch (err) {
    if (err instanceof RequestObjectError) throw await earlyRefusal(p, params, "invalid_request_object", `request object: ${err.message}`);
    throw err;
  }
}

/**
 * An authorization error found before the request's parameters are known (a bad request object,
 * an unsupported request_uri): sent to the outer request's redirect URI when that one is valid for
 * the client, else shown on the error page (handle); /par answers it as JSON.
 */
class EarlyAuthorizeError extends AuthorizeRedirectError {
  constructor(err: AuthorizeRedirectError, readonly target?: { redirect_uri: string; state?: string; mode: ResponseMode }) {
    super(err.error, err.description);
  }
}

async function earlyRefusal(p: Provider, outer: Params, code: AuthorizeRedirectErrorCode, description: string): Promise<EarlyAuthorizeError> {
  const err = new AuthorizeRedirectError(code, description);
  try {
    const { redirect_uri } = await validateClient(p, outer);
    return new EarlyAuthorizeError(err, { redirect_uri, state: outer.values.get("state"), mode: requestedMode(outer) });
  } catch (invalid) {
    if (invalid instanceof PageError) return new EarlyAuthorizeError(err);
    throw invalid;
  }
}

/** A pushed request in use at /authorize: its record's key and the record as read. */
interface Pushed {
  key: string;
  record: PushedRequestRecord;
}

/**
 * The request's parameters: with a request_uri, those pushed to /par by the same client (RFC 9126
 * §4; parameters beside it are ignored), else its own, resolved. A pushed request is first used by
 * an authorization request (GET), then, once opened for the login page, only by its login form.
 */
async function requestParams(p: Provider, raw: Params, form: Params | undefined, requestUrl: string): Promise<{ params: Params; pushed?: Pushed }> {
  const uri = raw.values.get("request_uri");
  if (uri === undefined) return { params: await resolveRequestParams(p, raw, requestUrl) };
  if (raw.duplicates.includes("request_uri")) throw new PageError(400, "Invalid request", "request_uri must not be repeated");
  const key = requestUriKey(uri);
  if (key === undefined) {
    // Request objects by reference are not fetched (RFC 9101 §5.2: optional); push them instead.
    throw await earlyRefusal(
      p,
      raw,
      "request_uri_not_supported",
      "only request_uri values the pushed authorization request endpoint (/par) issued are supported",
    );
  }
  const clientId = raw.values.get("client_id");
  if (!clientId) throw new PageError(400, "Invalid request", "client_id is missing (it must accompany request_uri)");
  const record = await p.state.get<PushedRequestRecord>("pushed_request", key);
  if (!record || record.expires_at <= p.now() || record.client_id !== clientId || (record.opened === true) !== (form !== undefined)) {
    throw new PageError(400, "Invalid request_uri", "request_uri is unknown, expired or already used, or another client pushed it");
  }
  return { params: { values: new Map(record.params), duplicates: [] }, pushed: { key, record } };
}

/** Must this client's requests be pushed (RFC 9126 §5, §6)? */
const requiresPush = (p: Provider, client: Client) =>
  p.options.requirePushedAuthorizationRequests === true || client.require_pushed_authorization_requests === true;

/**
 * First use of a pushed request, for the login page: from now on only its login form may use it
 * (a second authorization request with it is refused), for as long as a login may take. Of two
 * first uses (here or at another instance) one opens it.
 */
async function openPushed(p: Provider, pushed: Pushed): Promise<Pushed> {
  const record: PushedRequestRecord = { ...pushed.record, expires_at: p.now() + OPENED_REQUEST_LIFETIME_MS, opened: true };
  if (!(await p.state.swap("pushed_request", pushed.key, pushed.record, record, { pruneAt: record.expires_at }))) throw usedRequestUri();
  return { key: pushed.key, record };
}

/** The code a pushed request leads to spends it: of two uses (here or at another instance) one gets it. */
async function spendPushed(p: Provider, pushed: Pushed | undefined): Promise<void> {
  if (pushed && !(await p.state.take("pushed_request", pushed.key, pushed.record))) throw usedRequestUri();
}

const usedRequestUri = () => new PageError(400, "Invalid request_uri", "request_uri was already used");

async function handle(c: Context, p: Provider, raw: Params, form: Params | undefined): Promise<Response> {
  let resolved: Awaited<ReturnType<typeof requestParams>>;
  try {
    resolved = await requestParams(p, raw, form, c.req.url);
  } catch (err) {
    if (!(err instanceof EarlyAuthorizeError)) throw err;
    if (!err.target) throw new PageError(400, "Invalid request", `${err.error}: ${err.description}`);
    return errorRedirect(c, p, err.target.redirect_uri, err.target.state, err, err.target.mode);
  }
  const { params, pushed: pushedAt } = resolved;
  let pushed = pushedAt;
  const base = await validateClient(p, params, c.req.url);
  let req: AuthorizeRequest;
  try {
    req = validateRest(params, base);
    if (!pushed && requiresPush(p, base.client)) {
      throw new AuthorizeRedirectError("invalid_request", "authorization requests must be pushed first (pushed_authorization_request_endpoint, RFC 9126)");
    }
  } catch (err) {
    if (err instanceof AuthorizeRedirectError) return errorRedirect(c, p, base.redirect_uri, params.values.get("state"), err, requestedMode(params));
    throw err;
  }
  const showLogin = (status: 200 | 400 | 401, error?: string) =>
    c.html(
      loginPage({
        action: samePath(c),
        params: pushed ? [["client_id", pushed.record.client_id], ["request_uri", requestUriOf(pushed.key)]] : hiddenParams(params),
        loginHint: form?.values.get("login") ?? req.login_hint,
        extraClaims: form?.values.get("extra_claims"),
        acr: { values: ACR_VALUES, selected: form?.values.get("acr") ?? preselectedAcr(req.acr_values, req.claims) },
        error,
        scenarios: p.scenarios(),
      }),
      status,
      PAGE_HEADERS,
    );

  if (!form) {
    const current = await currentSession(c, p);
    if (!needsLogin(req, current?.session, p.now())) {
      const { session } = current!;
      await spendPushed(p, pushed);
      const { code, stored } = issueCode(p, req, session, session.auth_time);
      await stored;
      return codeRedirect(c, p, req, code);
    }
    if (req.prompt.has("none")) {
      return errorRedirect(
        c,
        p,
        req.redirect_uri,
        req.state,
        new AuthorizeRedirectError("login_required", "no IdP session satisfies the request"),
        req.response_mode,
      );
    }
    if (pushed) pushed = await openPushed(p, pushed);
    return showLogin(200);
  }

  // A quick-pick button sends `quick_login`; it wins over the typed field.
  const typed = (form.values.get("quick_login") ?? form.values.get("login") ?? "").trim();
  if (typed === "") return showLogin(400, "enter a login");
  if (typed.length > 256) return showLogin(400, "login is too long");
  let claims: LoginClaims | undefined;
  try {
    claims = parseLoginClaims(form.values.get("extra_claims") ?? "");
  } catch (err) {
    if (err instanceof LoginClaimsError) return showLogin(400, err.message);
    throw err;
  }
  const acr = form.values.get("acr") ?? preselectedAcr(req.acr_values, req.claims);
  if (!isAcr(acr)) return showLogin(400, `unknown authentication level "${acr}": one of ${ACR_VALUES.join(", ")}`);
  const user: User = await p.resolveUser(typed);
  if (claims) user.claims = claims;
  if (user.password !== undefined && !constantTimeEqual(form.values.get("password") ?? "", user.password)) {
    return showLogin(401, "invalid login or password");
  }
  const sub = requiredSub(req.claims);
  if (sub !== undefined && user.sub !== sub) {
    return showLogin(400, `this request is for the subject "${sub}" only (claims: id_token.sub): sign in as that user`);
  }
  const failure = user.scenario?.effects.authorize;
  if (failure) {
    return errorRedirect(c, p, req.redirect_uri, req.state, new AuthorizeRedirectError(failure, `scenario ${user.login}`), req.response_mode);
  }
  // An essential acr the chosen level does not meet is a failed authentication (§5.5.1.1).
  if (!acrSatisfies(acr, req.claims)) {
    const unmet = new AuthorizeRedirectError("unmet_authentication_requirements", `the login's acr "${acr}" is not one the request requires as essential`);
    return errorRedirect(c, p, req.redirect_uri, req.state, unmet, req.response_mode);
  }
  await spendPushed(p, pushed);
  const now = p.now();
  // A new login replaces this browser's previous session.
  const previous = await currentSession(c, p);
  const sessionId = p.secret();
  const session: SessionRecord = {
    login: user.login,
    sub: user.sub,
    auth_time: now,
    expires_at: now + LIFETIME_MS.session,
    sid: p.secret(),
    acr,
    amr: AMR_OF[acr],
  };
  if (claims) session.claims = claims;
  const { code, stored } = issueCode(p, req, { ...user, sid: session.sid, acr: session.acr, amr: session.amr }, now);
  // One commit for the three writes: they are queued in the same turn.
  await Promise.all([
    previous ? endSessions(p, [previous]) : undefined, // back-channel logout for the session replaced
    p.put("session", sessionId, session, { pruneAt: session.expires_at, group: user.sub }),
    stored,
  ]);
  setCookie(c, p.sessionCookie, sessionId, { httpOnly: true, sameSite: "Lax", path: "/", maxAge: LIFETIME_MS.session / 1000, secure: secureCookies(c, p) });
  return codeRedirect(c, p, req, code);
}

export function registerAuthorize(app: Hono, p: Provider): void {
  app.get("/authorize", (c) => handle(c, p, toParams(new URL(c.req.url).searchParams), undefined));
  app.post("/authorize", async (c) => {
    const form = await readForm(c, ["login", "password", "quick_login"]);
    if (!form) throw new PageError(400, "Invalid request", "the login form must be sent as application/x-www-form-urlencoded");
    // An authorization request may come as a POST from any site (OIDC Core 3.1.2.1), but the
    // login form only from this provider's own page: another site's would sign the browser in as
    // someone the attacker chose (login CSRF).
    if (
      crossSite(c.req.raw) && (form.values.has("login") || form.values.has("quick_login") || form.values.has("password") || form.values.has("extra_claims"))
    ) notFromThisSite();
    const params: Params = { values: form.values, duplicates: form.duplicates };
    return handle(c, p, params, form);
  });
}
