/**
 * Claims from configuration, per client, scope or subject (like the request mappings of navikt's
 * mock-oauth2-server): rules `{client?, scope?, sub?}` → claims for the ID token, the access token
 * (its JWT form) and userinfo. Every rule whose conditions all hold applies, in order (a later one
 * overrides an earlier one's claim of the same name). They come after the user's own claims and
 * before the claims typed at login, which stay the most specific.
 *
 *   mappings:
 *     - client: web-app             # optional: this client
 *       scope: admin                # optional: the grant's scope has these (space-separated)
 *       sub: user-NfTfZYYJ1idFA58J4RDISA   # optional: this subject
 *       claims: {department: R&D}   # all three
 *       id_token: {...}             # only the ID token
 *       access_token: {...}         # only JWT access tokens
 *       userinfo: {...}             # only userinfo
 */
import * as v from "valibot";
import { CodedError } from "#lib/errors";
import { assertJsonDepth, JsonDepthError } from "#lib/http";
import { RESERVED_LOGIN_CLAIMS } from "./claims.ts";

export type ClaimTarget = "id_token" | "access_token" | "userinfo";
const TARGETS: readonly ClaimTarget[] = ["id_token", "access_token", "userinfo"];

export interface ClaimMapping {
  client?: string;
  scope?: string[];
  sub?: string;
  claims: Partial<Record<ClaimTarget, Record<string, unknown>>>;
}

export type ClaimMappingsErrorCode = "INVALID_CLAIM_MAPPINGS";

export class ClaimMappingsError extends CodedError<ClaimMappingsErrorCode> {
  constructor(message: string) {
    super("INVALID_CLAIM_MAPPINGS", message);
  }
}

const claimObject = v.pipe(
  v.custom<Record<string, unknown>>((x) => typeof x === "object" && x !== null && !Array.isArray(x), "must be an object of claim names to values"),
  v.record(v.string(), v.unknown()),
  v.check(
    (o) => !Object.keys(o).some((k) => RESERVED_LOGIN_CLAIMS.has(k) || k === "__proto__"),
    "may not set claims the provider sets (iss, sub, aud, exp, ...)",
  ),
);
const nonEmpty = v.pipe(v.string(), v.trim(), v.nonEmpty("must not be empty"));
const MappingSchema = v.strictObject({
  client: v.optional(nonEmpty),
  scope: v.optional(nonEmpty),
  sub: v.optional(nonEmpty),
  claims: v.optional(claimObject),
  id_token: v.optional(claimObject),
  access_token: v.optional(claimObject),
  userinfo: v.optional(claimObject),
});

/** `{mappings: [...]}` or a bare list (already parsed from YAML or JSON); none: []. */
export function parseClaimMappings(value: unknown): ClaimMapping[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value)
    ? value
    : typeof value === "object" && Object.keys(value).every((k) => k === "mappings")
    ? (value as { mappings?: unknown }).mappings ?? []
    : undefined;
  if (!Array.isArray(list)) throw new ClaimMappingsError("expected a list of mappings, or an object with a single key `mappings`");
  try {
    assertJsonDepth(list);
  } catch (err) {
    if (err instanceof JsonDepthError) throw new ClaimMappingsError(err.message);
    throw err;
  }
  return list.map((entry, i) => {
    const result = v.safeParse(MappingSchema, entry);
    if (!result.success) {
      const issue = result.issues[0];
      const path = v.getDotPath(issue);
      throw new ClaimMappingsError(`mappings[${i}]${path ? `.${path}` : ""}: ${issue.message}`);
    }
    const m = result.output;
    const mapping: ClaimMapping = { claims: {} };
    if (m.client !== undefined) mapping.client = m.client;
    if (m.scope !== undefined) mapping.scope = m.scope.split(/\s+/);
    if (m.sub !== undefined) mapping.sub = m.sub;
    for (const target of TARGETS) {
      const claims = { ...m.claims, ...m[target] };
      if (Object.keys(claims).length > 0) mapping.claims[target] = claims;
    }
    return mapping;
  });
}

/** Every claim name the mappings can add (discovery's claims_supported). */
export function mappedClaimNames(mappings: readonly ClaimMapping[] | undefined): string[] {
  return [...new Set((mappings ?? []).flatMap((m) => Object.values(m.claims).flatMap((claims) => Object.keys(claims))))];
}

/** The claims the mappings give `target` for a grant; undefined when none applies. */
export function mappedClaims(
  mappings: readonly ClaimMapping[] | undefined,
  target: ClaimTarget,
  grant: { client_id: string; scope: string; sub?: string },
): Record<string, unknown> | undefined {
  if (!mappings || mappings.length === 0) return undefined;
  let out: Record<string, unknown> | undefined;
  const scopes = grant.scope.split(" ");
  for (const m of mappings) {
    const claims = m.claims[target];
    if (!claims) continue;
    if (m.client !== undefined && m.client !== grant.client_id) continue;
    if (m.sub !== undefined && m.sub !== grant.sub) continue;
    if (m.scope !== undefined && !m.scope.every((s) => scopes.includes(s))) continue;
    out = { ...out, ...claims };
  }
  return out;
}
