/**
 * Verifying a JWT this provider signed and someone hands back (an `id_token_hint` at logout, a
 * subject token at token exchange): nothing is trusted from a token whose signature was not
 * checked against the provider's own key ring. Returns a result instead of throwing,
 * so each endpoint answers in its own form (an HTML page, an OAuth error).
 */
import type { JWTHeaderParameters, JWTPayload } from "jose";
import { loadJose } from "#lib/oauth";
import { SIGNING_ALGS } from "./algorithms.ts";
import type { KeyRing } from "./keys.ts";

/** The algorithms the provider signs with (keys.ts); anything else, `none` first, is refused. */
const ALGORITHMS: string[] = [...SIGNING_ALGS];
/** The `typ` keys.ts puts on ID tokens (logout tokens are `logout+jwt`, JWT access tokens `at+jwt`). */
const ID_TOKEN_TYP = "JWT";

interface OwnJwtCheck {
  /** The issuer `iss` must equal: the one that handles the request (each issuer by path is its own). */
  issuer: string;
  /** The header `typ` the token must carry, so one kind of token cannot stand in for another. */
  typ: string;
  /** A value `aud` must contain, when given. */
  audience?: string | undefined;
  /** Provider-clock ms at which `exp` must not have passed; omitted, an expired token still verifies. */
  now?: number | undefined;
}

type OwnJwt = { ok: true; payload: JWTPayload; header: JWTHeaderParameters } | { ok: false; reason: string };

type LocalKeys = ReturnType<typeof import("jose").createLocalJWKSet>;
/** The public key set of each ring, built once (a rotation makes a new ring). */
const localKeys = new WeakMap<KeyRing, LocalKeys>();

async function keysOf(ring: KeyRing): Promise<LocalKeys> {
  let keys = localKeys.get(ring);
  if (!keys) {
    const { createLocalJWKSet } = await loadJose();
    localKeys.set(ring, keys = createLocalJWKSet(JSON.parse(ring.jwksBody)));
  }
  return keys;
}

/** Verifies a JWT against the ring's published keys, then its `typ`, `iss`, `aud` and (if asked) `exp`. */
export async function verifyOwnJwt(ring: KeyRing, token: string, check: OwnJwtCheck): Promise<OwnJwt> {
  const { jwtVerify } = await loadJose();
  try {
    const { payload, protectedHeader } = await jwtVerify(token, await keysOf(ring), {
      algorithms: ALGORITHMS,
      typ: check.typ,
      issuer: check.issuer,
      ...(check.audience === undefined ? {} : { audience: check.audience }),
      // jose always checks `exp` against its clock; at the epoch no `exp` of ours has passed.
      currentDate: new Date(check.now ?? 0),
      clockTolerance: 0,
    });
    return { ok: true, payload, header: protectedHeader };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/**
 * Claims that mark the other classes of JWT the same keys sign, in case one is ever typed plainly:
 * `events` (a logout token, any Security Event Token, RFC 8417) and `client_id` or `scope` (an
 * access token, RFC 9068 §2.2). The provider never puts them in an ID token (a login cannot set
 * them, claims.ts RESERVED_LOGIN_CLAIMS).
 */
const NOT_IN_ID_TOKENS = ["events", "client_id", "scope"] as const;

/**
 * An ID token of this issuer (RFC 8725 §3.11: a valid signature does not say which class a token
 * is): `verifyOwnJwt` with `typ` "JWT", a subject, and none of the other classes' claims.
 */
export async function verifyOwnIdToken(ring: KeyRing, token: string, check: Omit<OwnJwtCheck, "typ">): Promise<OwnJwt> {
  const verified = await verifyOwnJwt(ring, token, { ...check, typ: ID_TOKEN_TYP });
  if (!verified.ok) return verified;
  const marked = NOT_IN_ID_TOKENS.filter((claim) => verified.payload[claim] !== undefined);
  if (marked.length > 0) return { ok: false, reason: `not an ID token (it has ${marked.join(", ")})` };
  if (typeof verified.payload.sub !== "string" || verified.payload.sub === "") return { ok: false, reason: "no subject" };
  // A signed userinfo response has the same keys and typ but no exp (routes/userinfo.ts).
  if (typeof verified.payload.exp !== "number") return { ok: false, reason: "not an ID token (no exp)" };
  return verified;
}
