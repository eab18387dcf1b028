/**
 * The userinfo endpoint: a bearer token, or a DPoP-bound token with `Authorization: DPoP` and a
 * proof carrying `ath`. Every 401 says why in `WWW-Authenticate` (RFC 6750 §3, RFC 9449 §7.1).
 */
import type { Context, Hono } from "hono";
import { isSigningAlg } from "../domain/algorithms.ts";
import { userClaims } from "../domain/claims.ts";
import { mappedClaims } from "../domain/claim-mappings.ts";
import { DpopError } from "#lib/oauth";
import type { Provider } from "../domain/provider.ts";
import type { AccessTokenRecord } from "../domain/records.ts";
import { checkProof } from "./dpop.ts";
import { noteClient } from "./debug-requests.ts";
import { endpoints, NO_STORE } from "./http.ts";

const ALGS = 'algs="ES256 RS256"';

function unauthorized(c: Context, scheme: "Bearer" | "DPoP" | "both", error?: string, description?: string): Response {
  const params = error ? `, error="${error}", error_description="${description ?? ""}"` : "";
  const challenges = scheme === "both"
    ? [`Bearer realm="idp"${params}`, `DPoP realm="idp", ${ALGS}${params}`]
    : scheme === "Bearer"
    ? [`Bearer realm="idp"${params}`]
    : [`DPoP realm="idp", ${ALGS}${params}`];
  const body = error ? { error, error_description: description ?? "" } : { error: "invalid_token", error_description: "an access token is required" };
  c.header("WWW-Authenticate", challenges.join(", "));
  return c.json(body, 401, NO_STORE);
}

async function userinfo(c: Context, p: Provider): Promise<Response> {
  const authorization = c.req.header("authorization");
  if (!authorization) return unauthorized(c, "both");
  const m = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization.trim());
  if (!m) return unauthorized(c, "both", "invalid_token", "malformed Authorization header");
  const scheme = m[1]!.toLowerCase() === "dpop" ? "DPoP" : "Bearer";
  const token = m[2]!;
  const record = await p.state.get<AccessTokenRecord>("access_token", token);
  if (!record || record.expires_at <= p.now()) return unauthorized(c, scheme, "invalid_token", "the access token is unknown, expired or revoked");
  noteClient(c, record.client_id);
  if (record.jkt !== undefined) {
    if (scheme !== "DPoP") return unauthorized(c, "DPoP", "invalid_token", "the access token is DPoP-bound: use the DPoP scheme with a proof");
    try {
      const proof = await checkProof(c, p, endpoints(p.issuerFor(c.req.url)).userinfo_endpoint, token);
      if (!proof) return unauthorized(c, "DPoP", "invalid_dpop_proof", "a DPoP proof is required");
      if (proof.jkt !== record.jkt) return unauthorized(c, "DPoP", "invalid_dpop_proof", "the proof key does not match the token binding");
    } catch (err) {
      if (err instanceof DpopError) return unauthorized(c, "DPoP", err.code, err.message);
      throw err;
    }
  } else if (scheme === "DPoP") {
    return unauthorized(c, "Bearer", "invalid_token", "the access token is not DPoP-bound: use the Bearer scheme");
  }
  if (record.login === undefined) return unauthorized(c, scheme, "invalid_token", "the access token has no user (client_credentials)");
  const user = { ...(await p.resolveUser(record.login)), sub: record.sub, claims: record.claims };
  const effect = user.scenario?.effects.userinfo;
  if (effect === "401") return unauthorized(c, scheme, "invalid_token", `scenario ${user.login}`);
  if (effect === "500") return c.json({ error: "server_error", error_description: `scenario ${user.login}` }, 500, NO_STORE);
  const claims = userClaims(user, mappedClaims(p.options.claimMappings, "userinfo", record));
  // What the claims request asked userinfo for beyond the user's claims (acr, amr, auth_time).
  for (const [k, v] of Object.entries(record.userinfo_context ?? {})) if (!(k in claims)) claims[k] = v;
  if (effect === "sub-mismatch") claims.sub = `${record.sub}-mismatch`;
  const signAlg = (await p.findClient(record.client_id))?.userinfo_signed_response_alg;
  if (isSigningAlg(signAlg)) {
    // OIDC Core §5.3.2: a signed response carries iss and aud. No exp: it is not an ID token
    // (signed-jwt.ts refuses a token without exp as one).
    const signed = { ...claims, iss: p.issuerFor(c.req.url), aud: record.client_id, iat: Math.floor(p.now() / 1000) };
    const jwt = await (await p.keys()).sign(signed, undefined, undefined, signAlg);
    return c.body(jwt, 200, { ...NO_STORE, "Content-Type": "application/jwt" });
  }
  return c.json(claims, 200, NO_STORE);
}

export function registerUserinfo(app: Hono, p: Provider): void {
  app.get("/userinfo", (c) => userinfo(c, p));
  app.post("/userinfo", (c) => userinfo(c, p));
}
