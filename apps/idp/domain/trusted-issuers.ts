/**
 * The issuers the JWT bearer grant trusts (jwt-bearer.ts), as configured (IDP_JWT_BEARER_ISSUERS,
 * --jwt-bearer-issuers): each names its keys (`jwks` inline, or `jwks_uri` on loopback), the
 * audiences its assertions may carry and which claim names the subject.
 */
import * as v from "valibot";
import { isLoopbackUrl } from "./client-keys.ts";
import type { JwkSet } from "./clients.ts";
import { TrustedIssuersError } from "./errors.ts";

export interface TrustedIssuer {
  issuer: string;
  jwks?: JwkSet;
  jwks_uri?: string;
  /** `aud` values accepted (any one); default the provider's issuer and token endpoint. */
  audiences?: string[];
  /** The claim whose value becomes the access token's subject; default `sub`. */
  subject_claim?: string;
}

const TrustedIssuerSchema = v.pipe(
  v.strictObject({
    issuer: v.pipe(v.string(), v.nonEmpty("issuer must not be empty")),
    jwks: v.optional(v.object({ keys: v.array(v.looseObject({ kty: v.string() })) })),
    jwks_uri: v.optional(v.pipe(v.string(), v.check(isLoopbackUrl, "jwks_uri must be a loopback http(s) URL"))),
    audiences: v.optional(v.array(v.pipe(v.string(), v.nonEmpty()))),
    subject_claim: v.optional(v.pipe(v.string(), v.nonEmpty())),
  }),
  v.check((i) => (i.jwks === undefined) !== (i.jwks_uri === undefined), "give exactly one of jwks and jwks_uri"),
);

/** Validates the trusted issuers list (a list, or `{issuers: [...]}`). */
export function parseTrustedIssuers(value: unknown): TrustedIssuer[] {
  const list = value !== null && typeof value === "object" && !Array.isArray(value) && "issuers" in value ? (value as { issuers: unknown }).issuers : value;
  const result = v.safeParse(v.array(TrustedIssuerSchema), list);
  if (!result.success) {
    const issue = result.issues[0];
    const path = v.getDotPath(issue);
    throw new TrustedIssuersError(`${path ? `${path}: ` : ""}${issue.message}`);
  }
  return result.output as TrustedIssuer[];
}
