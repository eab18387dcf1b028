/** HTTP pieces every service uses: the error envelope, request ids, body and JSON limits, static files, client addresses and trusted proxies, the host allowlist, cross-site requests, unframeable pages. Runtime-specific modules are imported by path (#lib/http/<file>.ts). */
export * from "./body-limit.ts";
export * from "./client-address.ts";
export * from "./cross-site.ts";
export * from "./errors.ts";
export * from "./frame-deny.ts";
export * from "./headers.ts";
export * from "./host-allowlist.ts";
export * from "./json-body.ts";
export * from "./json-limits.ts";
export * from "./request-id.ts";
export * from "./static-files.ts";
export * from "./trusted-proxy.ts";
export * from "./access-token.ts";
