/**
 * The device authorization grant (RFC 8628): `/device_authorization` starts a grant, the `/device`
 * page approves or denies it; polling happens at /token.
 */
import type { Context, Hono } from "hono";
import { allowsGrant } from "../domain/clients.ts";
import { OAuthError } from "../domain/errors.ts";
import { scopeList } from "../domain/scopes.ts";
import type { Provider } from "../domain/provider.ts";
import { constantTimeEqual } from "../domain/random.ts";
import { DEVICE_INTERVAL_S, type DeviceGrantRecord, EXPIRED_GRANT_GRACE_MS, LIFETIME_MS } from "../domain/records.ts";
import { generateUserCode, normalizeUserCode } from "../domain/user-code.ts";
import { devicePage, deviceResultPage } from "../pages/device.ts";
import { DEVICE_CODE_GRANT } from "./discovery.ts";
import { currentSession, endpoints, NO_STORE, PAGE_HEADERS, readForm, readOAuthForm, samePath } from "./http.ts";
import { authenticate } from "./token.ts";

const INVALID_CODE = "invalid or expired code";

/** The live, still pending grant a typed user code names, if any. */
async function pendingGrant(p: Provider, typed: string | undefined): Promise<{ deviceCode: string; grant: DeviceGrantRecord } | undefined> {
  const userCode = typed === undefined ? undefined : normalizeUserCode(typed);
  if (!userCode) return undefined;
  const deviceCode = await p.state.get<string>("user_code", userCode);
  const grant = deviceCode === undefined ? undefined : await p.state.get<DeviceGrantRecord>("device_grant", deviceCode);
  if (!grant || grant.status !== "pending" || grant.expires_at <= p.now()) return undefined;
  return { deviceCode: deviceCode!, grant };
}

async function startGrant(p: Provider, clientId: string, scope: string): Promise<{ deviceCode: string; userCode: string; expiresAt: number }> {
  const now = p.now();
  const deviceCode = p.secret();
  const expiresAt = now + LIFETIME_MS.deviceGrant;
  const pruneAt = expiresAt + EXPIRED_GRANT_GRACE_MS;
  // 32^8 codes: a collision with a live one is rare, but must not hand out a shared code (here
  // or at another instance): the user code is claimed first.
  let userCode = generateUserCode(p.random);
  while (!(await p.add("user_code", userCode, deviceCode, { pruneAt }))) userCode = generateUserCode(p.random);
  const grant: DeviceGrantRecord = { client_id: clientId, scope, user_code: userCode, status: "pending", interval: DEVICE_INTERVAL_S, expires_at: expiresAt };
  await p.put("device_grant", deviceCode, grant, { pruneAt });
  return { deviceCode, userCode, expiresAt };
}

/**
 * Applies a decision to a grant that is still pending. The grant is replaced only as it was read:
 * a poll that changed it meanwhile (at this instance or another) means reading it again; another
 * decision means this one comes too late.
 */
async function decideGrant(p: Provider, deviceCode: string, decision: Partial<DeviceGrantRecord>): Promise<boolean> {
  for (;;) {
    const grant = await p.state.get<DeviceGrantRecord>("device_grant", deviceCode);
    if (!grant || grant.status !== "pending" || grant.expires_at <= p.now()) return false;
    const pruneAt = grant.expires_at + EXPIRED_GRANT_GRACE_MS;
    if (await p.state.swap("device_grant", deviceCode, grant, { ...grant, ...decision }, { pruneAt })) return true;
  }
}

async function decide(c: Context, p: Provider): Promise<Response> {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) c.header(name, value);
  const form = await readForm(c);
  if (!form) return c.html(deviceResultPage("the form must be sent as application/x-www-form-urlencoded"), 400);
  const v = form.values;
  const found = await pendingGrant(p, v.get("user_code"));
  if (!found) return c.html(deviceResultPage(INVALID_CODE), 400);
  const action = v.get("action");
  const again = (status: 400 | 401, error: string) =>
    c.html(devicePage({ action: samePath(c), userCode: found.grant.user_code, login: v.get("login"), error }), status);
  if (action === "deny") {
    if (!(await decideGrant(p, found.deviceCode, { status: "denied" }))) return c.html(deviceResultPage(INVALID_CODE), 400);
    return c.html(deviceResultPage("Request denied: the device was not connected."), 200);
  }
  if (action !== "approve") return again(400, "choose approve or deny");
  const typed = (v.get("login") ?? (await currentSession(c, p))?.session.login ?? "").trim();
  if (typed === "") return again(400, "enter the login that approves the device");
  const user = await p.resolveUser(typed);
  if (user.password !== undefined && !constantTimeEqual(v.get("password") ?? "", user.password)) return again(401, "invalid login or password");
  if (!(await decideGrant(p, found.deviceCode, { status: "approved", login: user.login, sub: user.sub, auth_time: p.now() }))) {
    return c.html(deviceResultPage(INVALID_CODE), 400);
  }
  return c.html(deviceResultPage(`Device approved for ${user.login}. You can return to your device.`), 200);
}

export function registerDevice(app: Hono, p: Provider): void {
  app.post("/device_authorization", async (c) => {
    const form = await readOAuthForm(c);
    const client = await authenticate(c, p, form);
    if (!allowsGrant(client, DEVICE_CODE_GRANT)) throw new OAuthError("unauthorized_client", "the client may not use the device grant");
    const scopes = scopeList(form.values.get("scope") ?? "");
    if (!scopes.includes("openid")) throw new OAuthError("invalid_scope", "scope must include openid");
    if (client.allowed_scopes && !scopes.every((s) => client.allowed_scopes!.has(s))) {
      throw new OAuthError("invalid_scope", "scope not allowed for this client");
    }
    const { deviceCode, userCode } = await startGrant(p, client.client_id, [...new Set(scopes)].join(" "));
    const verificationUri = endpoints(p.issuerFor(c.req.url)).verification_uri;
    return c.json(
      {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
        expires_in: LIFETIME_MS.deviceGrant / 1000,
        interval: DEVICE_INTERVAL_S,
      },
      200,
      NO_STORE,
    );
  });

  app.get("/device", async (c) => {
    const typed = c.req.query("user_code");
    const userCode = typed === undefined ? undefined : (normalizeUserCode(typed) ?? typed);
    const login = (await currentSession(c, p))?.session.login;
    return c.html(devicePage({ action: samePath(c), userCode, login }), 200, PAGE_HEADERS);
  });

  app.post("/device", (c) => decide(c, p));
}
