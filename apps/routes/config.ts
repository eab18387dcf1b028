/**
 * The route host's settings, decoded once for every runtime: the `routes:` section (flags,
 * `ROUTES_*` environment variables, config files and profiles on the command line, cli-config.ts;
 * wrangler vars in the Worker, worker.ts), through the same layers (lib/config), so a value means
 * the same everywhere and a bad one is refused the same way (CONFIG_INVALID_VALUE naming the
 * variable or flag). Also what both build the host from. Runtime-free.
 */
import {
  acceptedBy,
  booleanField,
  defineSection,
  fromEnv,
  listenAddressCheck,
  type Resolved,
  resolveSection,
  type SectionValues,
  stringField,
  wholeNumberCheck,
} from "#lib/config";
import { hostAllowlist, parseAllowedHosts, parseTrustedProxy, type TrustedProxy } from "#lib/http";
import * as v from "valibot";
import type { Policy } from "./auth/policy.ts";
import { DEFAULT_SIGN_IN_RATE_LIMIT, type HostSecuritySettings, parseSignInRateLimit } from "./auth/security.ts";
import type { AuditSetting } from "./build.ts";
import type { ScriptLimits } from "./script/script-sandbox.ts";

export const routesSection = defineSection({
  key: "routes",
  envPrefix: "ROUTES_",
  fields: {
    script: stringField({ default: "", description: "The route script (JavaScript); files beside it may be required" }),
    addr: stringField({
      default: "127.0.0.1:8080",
      description: "Listen address HOST:PORT",
      check: listenAddressCheck,
    }),
    dev: booleanField({ default: false, description: "Development mode: reload the script when it changes, error messages in 500s, a dev page at /_routes" }),
    threads: stringField({
      default: "2",
      description: "Sandbox threads running handlers (0: on the serving thread, for debugging)",
      check: wholeNumberCheck(0, 64),
    }),
    issuer: stringField({
      default: "http://127.0.0.1:5556",
      description:
        "OIDC issuer whose access tokens authenticate requests and where browsers sign in; a path (/idp) is this host's own origin plus that path, for an identity provider the script mounts there (empty: no authenticator)",
      // Empty means no authenticator from every source: an empty var must not bring back the default issuer.
      emptyEnvIsValue: true,
    }),
    audience: stringField({ default: "", description: "Accepted aud of access tokens, comma-separated (empty: the sign-in client id; *: any)" }),
    "client-id": stringField({
      default: "public-spa",
      description: "Client id for browser sign-in at the issuer (/auth/login; redirect URI <origin>/auth/callback)",
    }),
    "client-secret": stringField({ default: "", secret: true, description: "Its secret, for a confidential client" }),
    "policy-file": stringField({
      default: "",
      description:
        "Policy (YAML or JSON) mapping roles to actions; ROUTES_POLICY gives one inline (neither: actions granted by the token's scope, roles, groups or permissions)",
    }),
    "introspection-client-id": stringField({
      default: "",
      description: "Client id for introspecting opaque tokens at the issuer (empty: opaque tokens refused)",
    }),
    "introspection-client-secret": stringField({ default: "", secret: true, description: "Its secret" }),
    assets: stringField({
      default: "",
      description:
        "Read-only directories a script serves with app.staticFromAssetsModule(prefix, require(NAME), root): DIR (module assets) or NAME=DIR, comma-separated; bundled into the Worker by `bundle`",
    }),
    "static-root": stringField({ default: "", description: "Directory app.static paths are relative to (default: the script's directory)" }),
    "session-secret": stringField({ default: "", secret: true, description: "Key signing the host session cookie (default: random at each start)" }),
    db: stringField({
      default: "",
      description:
        "SQL store for resources and audit events: file:PATH, :memory:, or a libSQL server (ROUTES_DB_AUTH_TOKEN); empty or none: no store (routes with resources answer 500)",
    }),
    audit: stringField({
      default: "auto",
      description: "Where audit events go: auto or db (the store when there is one, else one log line each), log, off",
      check: v.picklist(["auto", "db", "log", "off"], 'expected "auto", "db", "log" or "off"'),
    }),
    "cpu-ms": stringField({ default: "5000", description: "CPU time of one handler call, ms", check: wholeNumberCheck(1, 600_000) }),
    "wall-ms": stringField({ default: "30000", description: "Wall time of one handler call, ms", check: wholeNumberCheck(1, 600_000) }),
    "mem-mb": stringField({ default: "64", description: "QuickJS heap of one sandbox, MiB", check: wholeNumberCheck(1, 2048) }),
    "allowed-hosts": stringField({
      default: "",
      description:
        "Host names answered beyond loopback, localhost, the listen address and the issuer's host, comma-separated (.domain: its subdomains; *: any): any other Host gets 421 (DNS rebinding)",
      check: acceptedBy((value) => hostAllowlist({ hosts: parseAllowedHosts(value) }), "expected host names, .domain or *"),
    }),
    "trusted-proxy": stringField({
      default: "none",
      description:
        "Whose word counts for the client's address and https: none (the socket's peer), cloudflare (CF-Connecting-IP), or the proxies' IP addresses (X-Forwarded-For, X-Forwarded-Proto); unset in the Worker: cloudflare",
      check: acceptedBy(parseTrustedProxy, "expected none, cloudflare or IP addresses"),
    }),
    "sign-in-rate-limit": stringField({
      default: DEFAULT_SIGN_IN_RATE_LIMIT,
      description:
        "Requests to the sign-in routes (/auth/*) one client address may make: LIMIT/SECONDS, one counter for all of them (past it: 429); off: no limit",
      check: acceptedBy(parseSignInRateLimit, "expected LIMIT/SECONDS (such as 60/60) or off"),
    }),
  },
});

type RoutesFields = typeof routesSection.fields;
type RoutesValues = SectionValues<RoutesFields>;
export type RoutesSettings = Resolved<RoutesFields>;

/**
 * The Worker's settings: its vars (the string ones; bindings are not settings) over the defaults,
 * decoded as the command line decodes the environment. Throws ConfigError on a bad value.
 */
export function routesSettingsFromVars(vars: Record<string, unknown>): RoutesSettings {
  const env = Object.fromEntries(Object.entries(vars).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  return resolveSection(routesSection, fromEnv(routesSection, env));
}

/** One handler call's limits (each range-checked by the section). */
export const scriptLimits = (values: RoutesValues): ScriptLimits => ({
  cpuMs: Number(values["cpu-ms"]),
  wallMs: Number(values["wall-ms"]),
  memMb: Number(values["mem-mb"]),
});

export const auditSetting = (values: RoutesValues): AuditSetting => values.audit as AuditSetting;

/** Sign-in, tokens and policy; `issuer` is the setting made a URL (`issuerFor`: a path is this host's origin plus it). */
export function securitySettings(values: RoutesValues, issuer: string, policy: Policy | undefined): Omit<HostSecuritySettings, "store"> {
  return {
    issuer,
    audience: values.audience,
    introspection: values["introspection-client-id"]
      ? { clientId: values["introspection-client-id"], clientSecret: values["introspection-client-secret"] }
      : undefined,
    clientId: values["client-id"],
    clientSecret: values["client-secret"],
    sessionSecret: values["session-secret"],
    policy,
    signInRateLimit: parseSignInRateLimit(values["sign-in-rate-limit"]),
  };
}

/**
 * Whose word counts for the client's address: the setting, or when nothing set it the platform's
 * default (`none` on Node and Deno; `cloudflare` on workerd, where the platform sets
 * CF-Connecting-IP and a client cannot).
 */
export function trustedProxy(settings: RoutesSettings, platformDefault: "none" | "cloudflare"): TrustedProxy {
  return parseTrustedProxy(settings.sources["trusted-proxy"] === "default" ? "" : settings.values["trusted-proxy"], platformDefault);
}
