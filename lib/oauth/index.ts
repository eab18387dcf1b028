/** OAuth building blocks: the jose loader and base64url helpers, DPoP proofs. Runtime-specific modules are imported by path (#lib/oauth/<file>.ts). */
export * from "./dpop.ts";
export * from "./jose.ts";
