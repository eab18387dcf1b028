/**
 * What a service prints for a person: its logger (readable lines on a terminal, JSON lines when
 * piped or with LOG_FORMAT=json) and a short banner saying where it is. Runtime-free: the
 * HostRuntime says whether stdout is a terminal.
 *
 *   LOG_LEVEL   debug | info (default) | warn | error | silent
 *   LOG_FORMAT  text | json (default: text on a terminal, json otherwise)
 *   NO_COLOR    any value: no ANSI colours in text lines
 */
import { createLogger, type Logger, type LogLevel } from "./log.ts";
import type { HostRuntime } from "./runtime.ts";

const LEVELS = new Set(["debug", "info", "warn", "error", "silent"]);

function textOutput(runtime: HostRuntime): boolean {
  const format = runtime.env.LOG_FORMAT;
  return format === "text" || (format !== "json" && runtime.terminal);
}

export function serviceLogger(runtime: HostRuntime, service: string): Logger {
  const level = runtime.env.LOG_LEVEL;
  const text = textOutput(runtime);
  return createLogger({
    fields: { service },
    level: level && LEVELS.has(level) ? (level as LogLevel | "silent") : "info",
    format: text ? "text" : "json",
    color: text && runtime.terminal && !runtime.env.NO_COLOR,
  });
}

/** Rows as aligned text columns, two spaces apart (the last column unpadded). */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd()).join("\n");
}

/** "profile dev (flag:--profile); addr from flag:--addr, client-id from env:IDP_CLIENT_ID", or "defaults". */
export function configSourcesLine(profile: { name: string; source: string }, sources: Record<string, string>): string {
  const set = Object.entries(sources).filter(([, source]) => source !== "default" && !source.startsWith("derived:"));
  const fields = set.length === 0 ? "every field its default" : set.map(([field, source]) => `${field} from ${source}`).join(", ");
  return `profile ${profile.name} (${profile.source}); ${fields}`;
}

/** The ports `npm start` (and `npx deno task dev`) serves each service on. */
const START_PORTS = { idp: 5556, sessions: 3210, routes: 8080 } as const;
const SERVICE_NAMES = { idp: "the identity provider", sessions: "the session service", routes: "the route host" } as const;

/**
 * Why a service could not listen, for its one line on stderr: an address in use is most often
 * `npm start` already serving that service there, so say so and how to go around it.
 */
export function listenFailure(service: keyof typeof START_PORTS, addr: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (!/EADDRINUSE|AddrInUse|address already in use/i.test(message)) return `${service}: cannot listen on ${addr}: ${message}`;
  const port = Number(/:(\d+)$/.exec(addr)?.[1]);
  const started = port === START_PORTS[service]
    ? ` If \`npm start\` (or \`npx deno task dev\`) is running, it already serves ${SERVICE_NAMES[service]} on this port: use that one, or stop it first.`
    : "";
  return `${service}: cannot listen on ${addr}: the address is already in use (another process listens there).${started} ` +
    `To run another beside it, pick a free port: --addr 127.0.0.1:${Number.isFinite(port) ? port + 1 : 0}`;
}

/** How a user runs one of this repository's services on the runtime at hand, for a hint:
 * `npm run routes -- routes ...` on Node, `npx deno task routes routes ...` on Deno (deno.json's tasks). */
export function serviceCommand(runtime: Pick<HostRuntime, "name">, service: "idp" | "sessions" | "routes", args: string): string {
  return runtime.name === "deno" ? `npx deno task ${service} ${args}` : `npm run ${service} -- ${args}`;
}

/**
 * A few aligned lines saying where a service is, printed on a terminal (or with LOG_FORMAT=text)
 * when it starts: a log line says the same for machines.
 */
export function printBanner(runtime: HostRuntime, title: string, rows: [string, string | undefined][]): void {
  if (!textOutput(runtime) || runtime.env.LOG_LEVEL === "silent") return;
  const shown = rows.filter((r): r is [string, string] => r[1] !== undefined && r[1] !== "");
  const width = Math.max(...shown.map(([k]) => k.length));
  const bold = (s: string) => (runtime.terminal && !runtime.env.NO_COLOR ? `\x1b[1m${s}\x1b[0m` : s);
  runtime.print(["", bold(title), ...shown.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), ""].join("\n"));
}
