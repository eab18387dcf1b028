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
