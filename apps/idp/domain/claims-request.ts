/**
 * The `claims` request parameter (OIDC Core §5.5), `acr_values` (§3.1.2.1) and the
 * authentication context they lead to: the `acr` of a login (chosen on the login page among
 * ACR_VALUES) and its `amr` (RFC 8176 values).
 *
 * What honouring a claims request means here: the provider already releases every user claim in
 * both the ID token and userinfo (spec: whatever the scope), so a request adds what is otherwise
 * left out: `acr`, `amr` and `auth_time` in userinfo when its `userinfo` member names them, and
 * an `acr` requested as essential with `value`/`values` must be met (§5.5.1.1): a session whose
 * acr is not among them is not used silently, and a login that chooses another acr fails with
 * `unmet_authentication_requirements` (OpenID Connect Unmet Authentication Requirements 1.0).
 */
import * as v from "valibot";
import { CodedError } from "#lib/errors";
import { JsonDepthError, parseJsonBounded } from "#lib/http";

/** The authentication context classes a login can satisfy, weakest first (discovery `acr_values_supported`). */
export const ACR_VALUES = ["pwd", "mfa"] as const;
type Acr = (typeof ACR_VALUES)[number];
const DEFAULT_ACR: Acr = "pwd";
/** The methods (RFC 8176) each class stands for: `mfa` is a password and a one-time code (simulated). */
export const AMR_OF: Record<Acr, string[]> = { pwd: ["pwd"], mfa: ["pwd", "otp", "mfa"] };

export const isAcr = (value: string): value is Acr => (ACR_VALUES as readonly string[]).includes(value);

/** One requested claim (§5.5.1): null (default), or how it is wanted. */
interface ClaimRequest {
  essential?: boolean;
  value?: unknown;
  values?: unknown[];
}

export type ClaimsMember = Record<string, ClaimRequest | null>;

/** The `claims` parameter: the members this provider reads (others are ignored, §5.5). */
export interface ClaimsRequest {
  id_token?: ClaimsMember;
  userinfo?: ClaimsMember;
}

/** The authentication a grant came from (stored with codes, sessions and refresh tokens). */
export interface AuthContext {
  acr?: string;
  amr?: string[];
}

/** Longest `claims` parameter taken (UTF-8 bytes). */
const CLAIMS_REQUEST_MAX_BYTES = 4096;

export type ClaimsRequestErrorCode = "INVALID_CLAIMS_REQUEST";

/** A `claims` parameter that is not what §5.5 describes: `invalid_request` at /authorize. */
export class ClaimsRequestError extends CodedError<ClaimsRequestErrorCode> {
  constructor(message: string) {
    super("INVALID_CLAIMS_REQUEST", message);
  }
}

const claimRequest = v.nullable(
  v.looseObject({
    essential: v.optional(v.boolean("essential must be true or false")),
    value: v.optional(v.unknown()),
    values: v.optional(v.array(v.unknown(), "values must be a list")),
  }),
);
const member = v.pipe(
  v.custom<Record<string, unknown>>((x) => typeof x === "object" && x !== null && !Array.isArray(x), "must be an object of claim names"),
  v.record(v.string(), claimRequest),
);
const ClaimsRequestSchema = v.looseObject({ id_token: v.optional(member), userinfo: v.optional(member) });

/** Parses and checks the `claims` parameter (JSON text); a ClaimsRequestError says what is wrong. */
export function parseClaimsRequest(text: string): ClaimsRequest {
  if (text.length > CLAIMS_REQUEST_MAX_BYTES || new TextEncoder().encode(text).length > CLAIMS_REQUEST_MAX_BYTES) {
    throw new ClaimsRequestError(`claims is longer than ${CLAIMS_REQUEST_MAX_BYTES} bytes`);
  }
  let value: unknown;
  try {
    value = parseJsonBounded(text);
  } catch (err) {
    throw new ClaimsRequestError(err instanceof JsonDepthError ? `claims: ${err.message}` : "claims is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ClaimsRequestError("claims must be a JSON object");
  const result = v.safeParse(ClaimsRequestSchema, value);
  if (!result.success) {
    const issue = result.issues[0];
    throw new ClaimsRequestError(`claims.${v.getDotPath(issue) ?? ""}: ${issue.message}`);
  }
  const out: ClaimsRequest = {};
  // Only the members read later are kept (stored with the code): unknown members are ignored.
  for (const name of ["id_token", "userinfo"] as const) {
    const m = result.output[name];
    if (m !== undefined) out[name] = m as ClaimsMember;
  }
  return out;
}

/** The values a requested claim asks for (`value` or `values`); undefined: any. */
function wantedValues(request: ClaimRequest | null | undefined): unknown[] | undefined {
  if (!request) return undefined;
  if (request.values !== undefined) return request.values;
  if (request.value !== undefined) return [request.value];
  return undefined;
}

/**
 * The acr values a login must satisfy: those every essential `acr` request with values names (one
 * in each member must both be met, so two that name no value in common admit none); undefined
 * when none is essential with values.
 */
export function essentialAcr(claims: ClaimsRequest | undefined): string[] | undefined {
  let required: string[] | undefined;
  for (const m of [claims?.id_token, claims?.userinfo]) {
    const acr = m?.acr;
    const wanted = acr?.essential === true ? wantedValues(acr)?.filter((x): x is string => typeof x === "string") : undefined;
    if (wanted !== undefined) required = required === undefined ? wanted : required.filter((x) => wanted.includes(x));
  }
  return required;
}

/**
 * The subject the ID token must be for, when its member asks for `sub` with a value (§5.5.1: no
 * ID token or access token for another user, even one with a session).
 */
export function requiredSub(claims: ClaimsRequest | undefined): string | undefined {
  const value = claims?.id_token?.sub?.value;
  return typeof value === "string" ? value : undefined;
}

/** The acr values asked for, essential or voluntary (acr_values, then the claims request), in order. */
export function requestedAcr(acrValues: string[], claims: ClaimsRequest | undefined): string[] {
  const fromClaims = [claims?.id_token?.acr, claims?.userinfo?.acr].flatMap((r) => wantedValues(r) ?? []).filter((x): x is string => typeof x === "string");
  return [...new Set([...(essentialAcr(claims) ?? []), ...acrValues, ...fromClaims])];
}

/** The acr the login page preselects: the first requested one it can satisfy, else the default. */
export function preselectedAcr(acrValues: string[], claims: ClaimsRequest | undefined): Acr {
  return requestedAcr(acrValues, claims).find(isAcr) ?? DEFAULT_ACR;
}

/** Does an authentication of class `acr` meet an essential acr request? */
export function acrSatisfies(acr: string | undefined, claims: ClaimsRequest | undefined): boolean {
  const required = essentialAcr(claims);
  return required === undefined || (acr !== undefined && required.includes(acr));
}

/**
 * Claims userinfo adds because its `userinfo` member asks for them: the authentication context
 * (`acr`, `amr`, `auth_time` in seconds), which userinfo otherwise leaves out. Undefined when none.
 */
export function userinfoContextClaims(claims: ClaimsRequest | undefined, context: AuthContext & { auth_time?: number }): Record<string, unknown> | undefined {
  const asked = claims?.userinfo;
  if (!asked) return undefined;
  const out: Record<string, unknown> = {};
  if ("acr" in asked && context.acr !== undefined) out.acr = context.acr;
  if ("amr" in asked && context.amr !== undefined) out.amr = context.amr;
  if ("auth_time" in asked && context.auth_time !== undefined) out.auth_time = Math.floor(context.auth_time / 1000);
  return Object.keys(out).length > 0 ? out : undefined;
}
