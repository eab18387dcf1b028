/**
 * Structured logs: one JSON object a line, always with a level, a message and a timestamp, and
 * with the request id when there is one. The sink is a parameter so tests and quiet modes can
 * swap it out; there is no global logger.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;
export type LogSink = (line: string) => void;

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

export interface LoggerOptions {
  level?: LogLevel | "silent";
  sink?: LogSink;
  fields?: LogFields;
  now?: () => Date;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = options.level === "silent" ? Infinity : ORDER[options.level ?? "info"];
  const sink = options.sink ?? ((line: string) => console.log(line));
  const now = options.now ?? (() => new Date());
  const base = options.fields ?? {};
  const log = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < threshold) return;
    sink(JSON.stringify({ ts: now().toISOString(), level, msg, ...base, ...fields }));
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
