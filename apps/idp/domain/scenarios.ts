/**
 * Scenarios: logins that act out a case (docs/idp.md#users-and-scenarios). Builtins, then seeded users (which replace
 * a builtin of the same login), then scenarios added at run time. Any other typed login is a
 * synthetic user with default claims.
 */
import type { AuthorizeFailure } from "./errors.ts";
import type { SeededUser } from "./users.ts";

type TokenFailure = "invalid_grant" | "server_error" | "slow";
type IdTokenFailure = "expired" | "wrong-aud" | "wrong-iss" | "missing-email" | "email-unverified" | "bad-nonce" | "future-iat";
type UserinfoFailure = "401" | "500" | "sub-mismatch";
/** `SignKey`: which key signs the ID token, and under which `kid`. */
export type SignKey = "rotated" | "kid-not-found" | "bad-signature";

export interface ScenarioEffects {
  authorize?: AuthorizeFailure;
  token?: TokenFailure;
  idToken?: IdTokenFailure;
  userinfo?: UserinfoFailure;
  signKey?: SignKey;
}

export interface Scenario extends SeededUser {
  effects: ScenarioEffects;
  source: "builtin" | "seeded" | "runtime";
}

/** The builtin categories, in the order the login page shows them. */
export const CATEGORIES = {
  normal: "Normal users",
  claims: "Claim variants",
  authorize: "Authorization failures",
  token: "Token failures",
  idToken: "ID token failures",
  userinfo: "Userinfo failures",
  keys: "Key cases",
} as const;

function builtin(login: string, category: string, fields: Partial<SeededUser> = {}, effects: ScenarioEffects = {}): Scenario {
  return { login, claims: {}, omit_claims: [], category, ...fields, effects, source: "builtin" };
}

const many = Array.from({ length: 40 }, (_, i) => `group-${String(i + 1).padStart(2, "0")}`);

export const BUILTIN_SCENARIOS: readonly Scenario[] = [
  builtin("alice", CATEGORIES.normal),
  builtin("bob", CATEGORIES.normal),
  builtin("admin", CATEGORIES.claims, { groups: ["admins"], roles: ["admin"] }),
  builtin("viewer", CATEGORIES.claims, { groups: ["viewers"], roles: ["viewer"] }),
  builtin("no-groups", CATEGORIES.claims, { groups: [], roles: [] }),
  builtin("many-groups", CATEGORIES.claims, { groups: many }),
  builtin("tenant-a-admin", CATEGORIES.claims, { tenant: "tenant-a", roles: ["admin"], groups: ["tenant-a-admins"] }),
  builtin("tenant-b-viewer", CATEGORIES.claims, { tenant: "tenant-b", roles: ["viewer"], groups: ["tenant-b-viewers"] }),
  builtin("unicode-name", CATEGORIES.claims, { name: "Zoë Ångström-Łukasiewicz 山田", preferred_username: "zoë" }),
  builtin("no-email", CATEGORIES.claims, { omit_claims: ["email", "email_verified"] }),
  builtin("unverified-email", CATEGORIES.claims, { email_verified: false }),
  builtin("fail-access-denied", CATEGORIES.authorize, {}, { authorize: "access_denied" }),
  builtin("fail-login-required", CATEGORIES.authorize, {}, { authorize: "login_required" }),
  builtin("fail-consent-required", CATEGORIES.authorize, {}, { authorize: "consent_required" }),
  builtin("fail-server-error", CATEGORIES.authorize, {}, { authorize: "server_error" }),
  builtin("token-invalid-grant", CATEGORIES.token, {}, { token: "invalid_grant" }),
  builtin("token-server-error", CATEGORIES.token, {}, { token: "server_error" }),
  builtin("token-slow", CATEGORIES.token, {}, { token: "slow" }),
  builtin("id-expired", CATEGORIES.idToken, {}, { idToken: "expired" }),
  builtin("id-wrong-aud", CATEGORIES.idToken, {}, { idToken: "wrong-aud" }),
  builtin("id-wrong-iss", CATEGORIES.idToken, {}, { idToken: "wrong-iss" }),
  builtin("id-missing-email", CATEGORIES.idToken, {}, { idToken: "missing-email" }),
  builtin("id-email-unverified", CATEGORIES.idToken, {}, { idToken: "email-unverified" }),
  builtin("id-bad-nonce", CATEGORIES.idToken, {}, { idToken: "bad-nonce" }),
  builtin("id-future-iat", CATEGORIES.idToken, {}, { idToken: "future-iat" }),
  builtin("userinfo-401", CATEGORIES.userinfo, {}, { userinfo: "401" }),
  builtin("userinfo-500", CATEGORIES.userinfo, {}, { userinfo: "500" }),
  builtin("userinfo-sub-mismatch", CATEGORIES.userinfo, {}, { userinfo: "sub-mismatch" }),
  builtin("key-rotated", CATEGORIES.keys, {}, { signKey: "rotated" }),
  builtin("kid-not-found", CATEGORIES.keys, {}, { signKey: "kid-not-found" }),
  builtin("bad-signature", CATEGORIES.keys, {}, { signKey: "bad-signature" }),
];

export const fromSeeded = (user: SeededUser, source: "seeded" | "runtime"): Scenario => ({ ...user, effects: {}, source });

/**
 * The scenario registry: a later registration replaces an earlier one with the same login (and
 * takes its category). Order of registration is the order within a category.
 */
export class ScenarioRegistry {
  private readonly byLogin = new Map<string, Scenario>();

  constructor(scenarios: Iterable<Scenario> = BUILTIN_SCENARIOS) {
    for (const s of scenarios) this.register(s);
  }

  register(scenario: Scenario): void {
    this.byLogin.delete(scenario.login);
    this.byLogin.set(scenario.login, scenario);
  }

  get(login: string): Scenario | undefined {
    return this.byLogin.get(login);
  }

  /** Quick-pick groups: builtin categories first in their fixed order, then others by first appearance. */
  groups(): { category: string; scenarios: Scenario[] }[] {
    const order: string[] = Object.values(CATEGORIES);
    const groups = new Map<string, Scenario[]>(order.map((c) => [c, []]));
    for (const s of this.byLogin.values()) {
      const list = groups.get(s.category);
      if (list) list.push(s);
      else groups.set(s.category, [s]);
    }
    return [...groups].filter(([, list]) => list.length > 0).map(([category, scenarios]) => ({ category, scenarios }));
  }
}
