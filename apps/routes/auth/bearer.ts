/**
 * The bearer authenticator: access tokens from any OIDC issuer (our identity provider by default).
 *
 * - A JWT access token is verified with jose against the issuer's JWKS (found through discovery;
 *   jose caches the key set and fetches it again when a token names a key it does not know, so
 *   key rotation needs no restart): signature, `typ: at+jwt` (RFC 9068: an ID token or any other
 *   JWT of the issuer is not an access token), `iss`, `exp`/`nbf`, and `aud`.
 * - The audience is always checked: a token issued to some other client (its `aud`, or its
 *   `client_id` when an introspection answer has no `aud`) is refused unless the operator lists
 *   it, or says `*` (any).
 * - An opaque token is checked at the issuer's introspection endpoint (RFC 7662) with the
 *   configured client credentials; answers are cached briefly (never past the token's `exp`).
 * - A DPoP-bound token (`cnf.jkt`) must come as `Authorization: DPoP <token>` with a fresh proof
 *   (RFC 9449), checked as the identity provider checks one (lib/oauth/dpop.ts), signed by the key
 *   whose thumbprint is `jkt`, for this request, with `ath`, and a `jti` not seen before.
 *
 * No credentials: null (the pipeline answers 401 where they are required). Present but invalid:
 * `AuthenticationError`, 401 with a `WWW-Authenticate` challenge.
 */
import { DPOP_ALGS, DPOP_IAT_WINDOW_S, DpopError, loadJose, sha256Base64url, verifyDpopProof } from "#lib/oauth";
import { basicAuth, type IssuerMetadata, issuerMetadata } from "./issuer.ts";
import { type Actor, AuthenticationError, type Authenticator, type PipelineRequest } from "../core/services.ts";

interface BearerAuthenticatorOptions {
  /** The issuer URL; discovery is `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** Accepted audiences (any one of them; `*`: any audience). The command line's default is the
   * host's own sign-in client. */
  audience: string | string[];
  /** Client credentials for introspection of opaque tokens; without them, opaque tokens are refused. */
  introspection?: { clientId: string; clientSecret: string };
  /** After fetching the JWKS, how long a token with an unknown key waits before the next fetch,
   * ms (default 30 s: a flood of forged kids cannot make the host hammer the issuer). */
  jwksCooldownMs?: number;
  /** How long an introspection answer is reused, ms (default 30 s). */
  introspectionCacheMs?: number;
  fetch?: typeof fetch;
  /** Clock, ms (tests move it). */
  now?: () => number;
  /** Realm in the challenge (default "routes"). */
  realm?: string;
}

type Discovery = IssuerMetadata;

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const invalid = (message: string) => new AuthenticationError("invalid_token", message);

/** The actor a set of token claims describes. */
export function actorFromClaims(claims: Record<string, unknown>): Actor {
  const sub = typeof claims.sub === "string" ? claims.sub : typeof claims.client_id === "string" ? claims.client_id : undefined;
  if (!sub) throw invalid("the token has no subject");
  // A client_credentials token is the client itself: sub equals client_id.
  const kind = claims.client_id !== undefined && claims.client_id === sub ? "client" : "user";
  const tenants = claims.tenant_ids ?? claims.tenants ?? (typeof claims.tenant === "string" ? [claims.tenant] : undefined);
  const actor: Actor = { id: sub, kind, claims };
  if (Array.isArray(tenants) && tenants.every((t) => typeof t === "string")) actor.tenantIds = tenants as string[];
  return actor;
}

export function createBearerAuthenticator(options: BearerAuthenticatorOptions): Authenticator {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const now = options.now ?? Date.now;
  const cacheMs = options.introspectionCacheMs ?? 30_000;
  const realm = options.realm ?? "routes";
  const introspected = new Map<string, { claims: Record<string, unknown> | null; until: number }>();
  /** Verified JWTs until they expire: a JWT's validity is in itself, so checking it once is enough
   * (a signature check is most of a planned route's cost, bench/routes.bench.ts). */
  const verifiedJwts = new Map<string, { claims: Record<string, unknown>; until: number }>();
  const seenProofs = new Map<string, number>();
  const audiences = (Array.isArray(options.audience) ? options.audience : [options.audience]).filter((a) => a !== "");
  if (audiences.length === 0) throw new TypeError('createBearerAuthenticator: an audience is required ("*" accepts any)');
  const anyAudience = audiences.includes("*");
  /** An introspection answer is for this host when its `aud` (else its `client_id`) is accepted. */
  const forThisHost = (claims: Record<string, unknown>): boolean => {
    if (anyAudience) return true;
    const aud = claims.aud ?? claims.client_id;
    return (Array.isArray(aud) ? aud : [aud]).some((a) => typeof a === "string" && audiences.includes(a));
  };

  const discover = issuerMetadata(options.issuer, { fetch: doFetch, jwksCooldownMs: options.jwksCooldownMs });

  async function verifyJwt(token: string, d: Discovery): Promise<Record<string, unknown>> {
    const known = verifiedJwts.get(token);
    if (known && known.until > now()) return known.claims;
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, d.jwks, {
        issuer: d.issuer,
        audience: anyAudience ? undefined : audiences,
        typ: "at+jwt",
        currentDate: new Date(now()),
        clockTolerance: 5,
      });
      if (typeof payload.exp === "number") {
        if (verifiedJwts.size >= 10_000) verifiedJwts.clear();
        verifiedJwts.set(token, { claims: payload as Record<string, unknown>, until: payload.exp * 1000 });
      }
      return payload as Record<string, unknown>;
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (code === "ERR_JWKS_NO_MATCHING_KEY" || code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") throw invalid("the token's signature does not verify");
      if (code === "ERR_JWT_EXPIRED") throw invalid("the token has expired");
      if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && (err as { claim?: string }).claim === "typ") {
        throw invalid("the token is not an access token (typ must be at+jwt)");
      }
      if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED") throw invalid(`the token was not issued for this host (${(err as Error).message})`);
      if (code.startsWith("ERR_J")) throw invalid(`the token is not valid (${(err as Error).message})`);
      throw err; // the JWKS could not be fetched: a 500, not the caller's fault
    }
  }

  async function introspect(token: string, d: Discovery): Promise<Record<string, unknown>> {
    if (!options.introspection || !d.introspectionEndpoint) throw invalid("the token is not a JWT, and this host has no introspection configured");
    const key = await sha256Base64url(token);
    const cached = introspected.get(key);
    if (cached && cached.until > now()) {
      if (!cached.claims) throw invalid("the token is not active, or not issued for this host");
      return cached.claims;
    }
    const res = await doFetch(d.introspectionEndpoint, {
      method: "POST",
      headers: {
        authorization: basicAuth(options.introspection.clientId, options.introspection.clientSecret),
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: new URLSearchParams({ token }).toString(),
    });
    if (!res.ok) throw new Error(`introspection answered ${res.status}`);
    const body = (await res.json()) as Record<string, unknown>;
    // Only an answer for this host is remembered as valid, so a cached answer needs no recheck.
    const active = body.active === true && (typeof body.exp !== "number" || body.exp * 1000 > now()) && forThisHost(body);
    const until = Math.min(now() + cacheMs, typeof body.exp === "number" ? body.exp * 1000 : Infinity);
    if (introspected.size > 10_000) introspected.clear();
    introspected.set(key, { claims: active ? body : null, until });
    if (!active) throw invalid(body.active === true && !forThisHost(body) ? "the token was not issued for this host (aud)" : "the token is not active");
    return body;
  }

  async function checkProof(req: PipelineRequest, token: string, jkt: string): Promise<void> {
    const proof = req.request.headers.get("dpop");
    if (!proof) throw new AuthenticationError("invalid_dpop_proof", "a DPoP-bound token needs a DPoP proof");
    let verified;
    try {
      verified = await verifyDpopProof(proof, { method: req.request.method, urls: [req.request.url], now: now(), accessToken: token });
    } catch (err) {
      if (err instanceof DpopError) throw new AuthenticationError(err.code, err.message);
      throw err;
    }
    if (verified.jkt !== jkt) throw new AuthenticationError("invalid_dpop_proof", "the DPoP proof is signed by a key the token is not bound to");
    const nowS = now() / 1000;
    for (const [seen, until] of seenProofs) if (until < nowS) seenProofs.delete(seen);
    const key = `${verified.jkt}:${verified.jti}`;
    if (seenProofs.has(key)) throw new AuthenticationError("invalid_dpop_proof", "the DPoP proof was used before");
    seenProofs.set(key, verified.iat + DPOP_IAT_WINDOW_S);
  }

  return {
    async authenticate(req) {
      const header = req.request.headers.get("authorization");
      if (!header) return null;
      const m = /^(Bearer|DPoP)\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
      if (!m) throw new AuthenticationError("invalid_request", "the Authorization header is not 'Bearer <token>' or 'DPoP <token>'");
      const scheme = m[1]!.toLowerCase() === "dpop" ? "DPoP" : "Bearer";
      const token = m[2]!;
      const d = await discover();
      const { decodeProtectedHeader } = await loadJose();
      let isJwt = false;
      if (JWT_SHAPE.test(token)) {
        try {
          isJwt = typeof decodeProtectedHeader(token).alg === "string";
        } catch {
          isJwt = false;
        }
      }
      const claims = isJwt ? await verifyJwt(token, d) : await introspect(token, d);
      const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
      if (typeof jkt === "string") {
        if (scheme !== "DPoP") throw invalid("a DPoP-bound token must be sent with the DPoP scheme");
        await checkProof(req, token, jkt);
      } else if (scheme === "DPoP") throw invalid("the token is not DPoP-bound");
      return actorFromClaims(claims);
    },
    challenge(_req, error) {
      const params = [`realm="${realm}"`];
      if (error) params.push(`error="${error.code}"`, `error_description="${error.message.replace(/["\\]/g, "")}"`);
      return `Bearer ${params.join(", ")}, DPoP algs="${DPOP_ALGS.join(" ")}"`;
    },
  };
}
