/** Discovery (`/.well-known/openid-configuration`) and the key set (`/jwks`), both precomputed. */
import type { Context, Hono } from "hono";
import { SUPPORTED_CLAIMS } from "../domain/claims.ts";
import { ACR_VALUES } from "../domain/claims-request.ts";
import { mappedClaimNames } from "../domain/claim-mappings.ts";
import { DPOP_ALGS } from "#lib/oauth";
import { CLIENT_SIGNING_ALGS, SIGNING_ALGS } from "../domain/algorithms.ts";
import { TOKEN_AUTH_METHODS } from "../domain/clients.ts";
import { JWT_BEARER_GRANT } from "../domain/jwt-bearer.ts";
import { PKCE_METHODS } from "../domain/pkce.ts";
import { REQUEST_OBJECT_ALGS } from "../domain/request-object.ts";
import type { Provider } from "../domain/provider.ts";
import type { JwksMode } from "../domain/records.ts";
import { answerWith, corsHeaders } from "./cors.ts";
import { endpoints } from "./http.ts";
import { RESPONSE_MODES } from "./response-mode.ts";

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** RFC 8693 (token-exchange.ts). */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const GRANT_TYPES = ["authorization_code", "refresh_token", DEVICE_CODE_GRANT, "client_credentials", TOKEN_EXCHANGE_GRANT];
export const SCOPES = ["openid", "profile", "email", "offline_access"];
const AUTH_METHODS = [...TOKEN_AUTH_METHODS];
/** Algorithms of client assertions (private_key_jwt, client_secret_jwt). */
const AUTH_SIGNING_ALGS = [...CLIENT_SIGNING_ALGS];

/** What the provider's configuration adds to discovery. */
interface DiscoveryOptions {
  /** Dynamic client registration is not off for this issuer: advertise registration_endpoint. */
  registration?: boolean;
  /** RFC 9126 §5: every authorization request must be pushed. */
  requirePushedAuthorizationRequests?: boolean;
  /** Trusted issuers of the JWT bearer grant are configured: advertise the grant. */
  jwtBearer?: boolean;
  /** Claim names configuration adds (claim-mappings.ts), listed in claims_supported too. */
  configuredClaims?: string[];
}

function discoveryDocument(issuer: string, options: DiscoveryOptions = {}): Record<string, unknown> {
  const { verification_uri: _, ...urls } = endpoints(issuer);
  return {
    issuer,
    ...urls,
    ...(options.registration ? { registration_endpoint: `${issuer}/register` } : {}),
    require_pushed_authorization_requests: options.requirePushedAuthorizationRequests === true,
    response_types_supported: ["code"],
    response_modes_supported: RESPONSE_MODES,
    grant_types_supported: options.jwtBearer ? [...GRANT_TYPES, JWT_BEARER_GRANT] : GRANT_TYPES,
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: SIGNING_ALGS,
    userinfo_signing_alg_values_supported: SIGNING_ALGS,
    request_object_signing_alg_values_supported: REQUEST_OBJECT_ALGS,
    scopes_supported: SCOPES,
    claims_supported: [...new Set([...SUPPORTED_CLAIMS, ...(options.configuredClaims ?? [])])],
    code_challenge_methods_supported: PKCE_METHODS,
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: AUTH_SIGNING_ALGS,
    introspection_endpoint_auth_signing_alg_values_supported: AUTH_SIGNING_ALGS,
    revocation_endpoint_auth_signing_alg_values_supported: AUTH_SIGNING_ALGS,
    dpop_signing_alg_values_supported: DPOP_ALGS,
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: ["none", "login"],
    claims_parameter_supported: true,
    claim_types_supported: ["normal"],
    acr_values_supported: ACR_VALUES,
    request_parameter_supported: true,
    request_uri_parameter_supported: false,
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  };
}

const JSON_TYPE = { "Content-Type": "application/json" };

export function registerDiscovery(app: Hono, p: Provider): void {
  // CORS headers from the handlers themselves (routes/cors.ts says why).
  const headers = corsHeaders(p, JSON_TYPE);
  // One body per issuer (there is one unless the issuer follows the request origin).
  const bodies = new Map<string, string>();
  app.get("/.well-known/openid-configuration", (c) => {
    const issuer = p.issuerFor(c.req.url);
    let body = bodies.get(issuer);
    if (body === undefined) {
      if (bodies.size >= 32) bodies.clear();
      body = JSON.stringify(
        discoveryDocument(issuer, {
          registration: p.registrationPolicy(c.req.url) !== "off",
          requirePushedAuthorizationRequests: p.options.requirePushedAuthorizationRequests,
          jwtBearer: (p.options.jwtBearerIssuers ?? []).length > 0,
          configuredClaims: mappedClaimNames(p.options.claimMappings),
        }),
      );
      bodies.set(issuer, body);
    }
    return answerWith(headers(c), (h) => c.body(body, 200, h));
  });

  // Normal mode once the keys are loaded, the case a relying party's key fetch hits: answered
  // synchronously from the precomputed body, as cheap as discovery. The mode is read on every
  // request (a Map lookup, in the Durable Object's memory on workerd), so a switch applies at once.
  app.get("/jwks", (c): Response | Promise<Response> => {
    const mode = p.jwksMode();
    const keys = mode === "normal" ? p.loadedKeys() : undefined;
    if (keys) return answerWith(headers(c), (h) => c.body(keys.jwksBody, 200, h));
    return answerWith(headers(c), (h) => jwksOtherModes(c, p, mode, h));
  });
}

/** The debug modes, and normal mode while the keys are still being loaded or generated. */
async function jwksOtherModes(c: Context, p: Provider, mode: JwksMode, headers: Record<string, string>): Promise<Response> {
  if (mode === "500") return c.json({ error: "server_error", error_description: "key endpoint failure (debug mode 500)" }, 500, headers);
  if (mode === "empty") return c.body('{"keys":[]}', 200, headers);
  if (mode === "slow") await p.options.sleep(p.options.jwksSlowMs);
  const keys = await p.keys();
  return c.body(keys.jwksBody, 200, headers);
}
