/**
 * Structured logs: one JSON object a line, always with a level, a message and a timestamp, and
 * with the request id when there is one; or, for a person at a terminal, the same as one readable
 * line (`format: "text"`). The sink is a parameter so tests and quiet modes can swap it out; there
 * is no global logger.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;
type LogSink = (line: string) => void;

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** Whether a line of this level would be written (to skip building costly fields). */
  enabled(level: LogLevel): boolean;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

interface LoggerOptions {
  level?: LogLevel | "silent";
  sink?: LogSink;
  fields?: LogFields;
  now?: () => Date;
  /** "json" (default): one JSON object a line; "text": `12:00:01.234 INFO  idp  msg key=value`. */
  format?: "json" | "text";
  /** ANSI colours in text lines (a terminal that did not ask for NO_COLOR). */
  color?: boolean;
}

const LABEL: Record<LogLevel, string> = { debug: "DEBUG", info: "INFO ", warn: "WARN ", error: "ERROR" };
const COLOR: Record<LogLevel, string> = { debug: "\x1b[90m", info: "\x1b[36m", warn: "\x1b[33m", error: "\x1b[31m" };
const PLAIN_VALUE = /^[\w./:@+-]+$/;

/** One readable line: time, level, service, message, then the other fields as key=value. */
function textLine(at: Date, level: LogLevel, msg: string, fields: LogFields, color: boolean): string {
  const { service, ...rest } = fields;
  const pairs = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" && PLAIN_VALUE.test(v) ? v : JSON.stringify(v)}`);
  const time = at.toISOString().slice(11, 23);
  const head = color ? `\x1b[90m${time}\x1b[0m ${COLOR[level]}${LABEL[level]}\x1b[0m` : `${time} ${LABEL[level]}`;
  const who = service === undefined ? "" : color ? ` \x1b[1m${String(service)}\x1b[0m` : ` ${String(service)}`;
  return `${head}${who}  ${msg}${pairs.length > 0 ? "  " + pairs.join(" ") : ""}`;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = options.level === "silent" ? Infinity : ORDER[options.level ?? "info"];
  const sink = options.sink ?? ((line: string) => console.log(line));
  const now = options.now ?? (() => new Date());
  const base = options.fields ?? {};
  const log = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < threshold) return;
    if (options.format === "text") sink(textLine(now(), level, msg, { ...base, ...fields }, options.color ?? false));
    else sink(JSON.stringify({ ts: now().toISOString(), level, msg, ...base, ...fields }));
  };
  return {
    log,
    debug: (m, f) => log("debug", m, f),
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
    enabled: (level) => ORDER[level] >= threshold,
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

export function errorFields(err: unknown): LogFields {
  return err instanceof Error ? { error: err.message, stack: err.stack } : { error: String(err) };
}
