/** HTTP pieces every service uses: the error envelope, request ids, body and JSON limits, static files, client addresses. Runtime-specific modules are imported by path (#lib/http/<file>.ts). */
export * from "./body-limit.ts";
export * from "./client-address.ts";
export * from "./errors.ts";
export * from "./headers.ts";
export * from "./json-body.ts";
export * from "./json-limits.ts";
export * from "./request-id.ts";
export * from "./static-files.ts";
