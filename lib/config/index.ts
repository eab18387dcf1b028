/** Layered configuration: sections, flags, environment, files and profiles, and their errors. Runtime-specific modules are imported by path (#lib/config/<file>.ts). */
export * from "./decode.ts";
export * from "./errors.ts";
export * from "./files.ts";
export * from "./layers.ts";
export * from "./load.ts";
export * from "./report.ts";
export * from "./section.ts";
export * from "./yaml.ts";
