/**
 * Users: seeded users from a YAML/JSON document (validated with valibot) and the synthetic user
 * derived from any typed login (docs/idp.md#users-and-scenarios).
 */
import * as v from "valibot";
import { describeIssues } from "#lib/http";
import { UsersDocumentError } from "./errors.ts";
import { base64urlEncode } from "#lib/oauth";

/** A seeded user after validation and normalization. */
export interface SeededUser {
  login: string;
  sub?: string;
  email?: string;
  name?: string;
  password?: string;
  email_verified?: boolean;
  groups?: string[];
  roles?: string[];
  tenant?: string;
  preferred_username?: string;
  locale?: string;
  claims: Record<string, unknown>;
  omit_claims: string[];
  category: string;
}

const DEFAULT_CATEGORY = "Seeded users";

const text = v.string();
const stringList = v.array(v.string());

/** One entry of `users` (also the body of POST /debug/scenarios). Unknown fields are errors. */
export const SeededUserSchema = v.strictObject({
  login: v.pipe(v.string(), v.trim(), v.nonEmpty("login must not be empty")),
  sub: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty("sub must not be empty"))),
  email: v.optional(text),
  name: v.optional(text),
  password: v.optional(text),
  email_verified: v.optional(v.boolean()),
  "email-verified": v.optional(v.boolean()),
  groups: v.optional(stringList),
  roles: v.optional(stringList),
  tenant: v.optional(text),
  preferred_username: v.optional(text),
  locale: v.optional(text),
  claims: v.optional(
    v.pipe(
      // A plain object: valibot's record alone would turn a list into {"0": ...}.
      v.custom<Record<string, unknown>>(
        (value) => typeof value === "object" && value !== null && !Array.isArray(value),
        "claims must be an object of claim names to values",
      ),
      v.record(v.string(), v.unknown()),
    ),
  ),
  omit_claims: v.optional(stringList),
  category: v.optional(text),
});

export type SeededUserInput = v.InferInput<typeof SeededUserSchema>;

/** Logins are trimmed and lower-cased before anything else sees them. */
export const normalizeLogin = (login: string) => login.trim().toLowerCase();

/** Whitespace-only entries are dropped; the others are trimmed. */
const cleanList = (list: string[] | undefined) => list === undefined ? undefined : list.map((s) => s.trim()).filter((s) => s !== "");

function normalize(input: v.InferOutput<typeof SeededUserSchema>): SeededUser {
  const emailVerified = input.email_verified ?? input["email-verified"];
  const user: SeededUser = {
    login: normalizeLogin(input.login),
    claims: input.claims ?? {},
    omit_claims: cleanList(input.omit_claims) ?? [],
    category: input.category?.trim() || DEFAULT_CATEGORY,
  };
  if (input.sub !== undefined) user.sub = input.sub;
  if (input.email !== undefined && input.email.trim() !== "") user.email = input.email.trim();
  if (input.name !== undefined && input.name.trim() !== "") user.name = input.name.trim();
  if (input.password !== undefined && input.password !== "") user.password = input.password;
  if (emailVerified !== undefined) user.email_verified = emailVerified;
  const groups = cleanList(input.groups);
  if (groups !== undefined) user.groups = groups;
  const roles = cleanList(input.roles);
  if (roles !== undefined) user.roles = roles;
  for (const key of ["tenant", "preferred_username", "locale"] as const) {
    const value = input[key]?.trim();
    if (value) user[key] = value;
  }
  return user;
}

/** Validates one user entry; `where` prefixes issue paths in the error message. */
export function parseSeededUser(value: unknown, where = ""): SeededUser {
  const result = v.safeParse(SeededUserSchema, value);
  if (!result.success) {
    const issues = describeIssues(result.issues).map((i) => ({ path: where + (i.path ? (where ? "." : "") + i.path : ""), message: i.message }));
    throw new UsersDocumentError(
      `invalid user${where ? ` at ${where}` : ""}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ")}`,
      issues,
    );
  }
  const input = result.output;
  if (input.email_verified !== undefined && input["email-verified"] !== undefined && input.email_verified !== input["email-verified"]) {
    throw new UsersDocumentError(`invalid user${where ? ` at ${where}` : ""}: email_verified and email-verified disagree`);
  }
  return normalize(input);
}

/**
 * A users document, already parsed from YAML or JSON: `{users: [...]}` or a bare list. Logins must
 * be unique after normalization. Throws `UsersDocumentError` with a message a CLI can print.
 */
export function parseSeededUsers(value: unknown): SeededUser[] {
  if (value === null || value === undefined) return [];
  let list: unknown;
  if (Array.isArray(value)) list = value;
  else if (typeof value === "object" && Object.keys(value).every((k) => k === "users")) list = (value as { users?: unknown }).users ?? [];
  else throw new UsersDocumentError("users document must be a list of users or an object with a single key `users`");
  if (!Array.isArray(list)) throw new UsersDocumentError("`users` must be a list");
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const user = parseSeededUser(entry, `users[${i}]`);
    if (seen.has(user.login)) throw new UsersDocumentError(`users[${i}]: duplicate login "${user.login}"`);
    seen.add(user.login);
    return user;
  });
}

const encoder = new TextEncoder();
const subCache = new Map<string, string>();

/** `"user-" + base64url(sha256("tinyidp:user:" + login)[0..16))`, for a normalized login. */
export async function syntheticSub(login: string): Promise<string> {
  const cached = subCache.get(login);
  if (cached !== undefined) return cached;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode("tinyidp:user:" + login)));
  const sub = "user-" + base64urlEncode(digest.subarray(0, 16));
  // Typed logins are unbounded; the cache is only a speed-up, so it is simply dropped when full.
  if (subCache.size >= 10_000) subCache.clear();
  subCache.set(login, sub);
  return sub;
}

export const syntheticEmail = (login: string) => (login.includes("@") ? login : `${login}@example.test`);
export const syntheticName = (login: string) => login.split("@")[0]!;
