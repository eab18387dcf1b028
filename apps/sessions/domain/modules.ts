/**
 * Which module names a template may add: only names of the deployment's catalog (MODULE_CATALOG,
 * possibly narrowed by configuration). JavaScript built-ins are always present in the sandbox, so
 * adding one is refused with its own message; so is every other name.
 */
import { MODULE_CATALOG, type ModuleName } from "../live/types.ts";
import { SessionServiceError } from "./errors.ts";

/** Globals every QuickJS context has (ECMAScript built-ins) plus the sandbox's console. */
const BUILTINS = new Set(
  [
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "Atomics",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float32Array",
    "Float64Array",
    "Function",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "Intl",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "console",
    "globalThis",
  ].map((name) => name.toLowerCase()),
);

function isModuleName(name: string): name is ModuleName {
  return (MODULE_CATALOG as readonly string[]).includes(name);
}

/** Parses a catalog setting (`fs,path`): every name must be in MODULE_CATALOG; `""` or `none` is none
 * (an empty environment variable counts as unset, so it needs the word). */
export function parseModuleCatalog(text: string): ModuleName[] {
  if (text.trim() === "none") return [];
  const names = text.split(",").map((n) => n.trim()).filter((n) => n !== "");
  const unknown = names.filter((n) => !isModuleName(n));
  if (unknown.length > 0) throw new Error(`unknown module${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}: the catalog is ${MODULE_CATALOG.join(", ")}`);
  return [...new Set(names)] as ModuleName[];
}

/** Throws MODULE_NOT_ALLOWED unless `name` is in `catalog`. */
export function checkModuleAllowed(name: string, catalog: readonly ModuleName[]): ModuleName {
  if ((catalog as readonly string[]).includes(name)) return name as ModuleName;
  const details = { name, catalog: [...catalog] };
  if (BUILTINS.has(name.toLowerCase())) {
    throw new SessionServiceError("MODULE_NOT_ALLOWED", `${name} is a JavaScript built-in: it is always present and cannot be added`, details);
  }
  throw new SessionServiceError("MODULE_NOT_ALLOWED", `${name} is not in the module catalog (${catalog.join(", ") || "empty"})`, details);
}

/** The settings of the three services, which no `env` capability may expose: database
 * credentials, access tokens, client and session secrets, signing keys. The session service can
 * run inside another's process (`npm start`, the route host's `require("sessions")`, the route
 * Worker's Durable Object), whose environment holds theirs; a script that read one could call the
 * API, the provider's debug interface, or sign sessions. */
const PRIVATE_ENV = /^(?:SESSIONS|ROUTES|IDP)_/i;

/** The host environment `env` capabilities choose from: everything but the services' settings. */
export function sandboxHostEnv(env: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === "string" && !PRIVATE_ENV.test(key)) out[key] = value;
  return out;
}
