/** `routes audit` and `routes resource put`: the route host's SQL store from the command line. */
import { lastFlag, type ParsedArgs } from "#lib/config/flags";
import { alignColumns } from "#lib/cli-output";
import type { HostRuntime } from "#lib/runtime";
import type { AuditEvent, AuditOutcome } from "./core/services.ts";
import { prepareRoutesStore, putResource, queryAudit } from "./store/store.ts";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { type Config, fail } from "./cli-config.ts";

/** `--since`: RFC 3339, or a duration back from now (`90s`, `15m`, `2h`, `7d`). */
function sinceTime(value: string, now = Date.now()): string {
  const m = /^(\d+)([smhd])$/.exec(value);
  if (m) return new Date(now - Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as "s" | "m" | "h" | "d"]).toISOString();
  const at = new Date(value);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d\d-\d\d/.test(value)) {
    throw new Error(`--since ${value}: expected RFC 3339 (2026-11-25T06:00:00Z) or a duration (15m, 2h, 7d)`);
  }
  return at.toISOString();
}

const OUTCOMES = ["allowed", "denied", "completed", "failed"] as const;

/** `routes audit` and `routes resource put`: the SQL store without a server. */
export async function storeCommand(runtime: HostRuntime, config: Config, args: ParsedArgs): Promise<undefined> {
  if (!config.db) return fail(runtime, `${args.positionals[0]} needs --db URL (or ROUTES_DB)`);
  const flag = (name: string) => lastFlag(args, name);
  let store: SqlStore;
  try {
    store = await openSqlStore(runtime, config.db, runtime.env.ROUTES_DB_AUTH_TOKEN);
    await prepareRoutesStore(store);
  } catch (err) {
    return fail(runtime, `--db ${config.db}: ${(err as Error).message}`);
  }
  try {
    if (args.positionals[0] === "resource") {
      const type = flag("type");
      const id = flag("id");
      if (!type || !id) return fail(runtime, "resource put needs --type and --id");
      let attributes: Record<string, unknown> = {};
      const raw = flag("attributes");
      if (raw !== undefined) {
        try {
          attributes = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          return fail(runtime, "--attributes must be a JSON object");
        }
        if (attributes === null || typeof attributes !== "object" || Array.isArray(attributes)) return fail(runtime, "--attributes must be a JSON object");
      }
      await putResource(store, { type, id, tenantId: flag("tenant"), owner: flag("owner"), attributes });
      runtime.print(`routes: ${type} ${id} stored`);
      return undefined;
    }
    const outcome = flag("outcome");
    if (outcome !== undefined && !OUTCOMES.includes(outcome as never)) return fail(runtime, `--outcome must be one of ${OUTCOMES.join(", ")}`);
    const limit = flag("limit") === undefined ? 100 : Number(flag("limit"));
    if (!Number.isInteger(limit) || limit < 1) return fail(runtime, "--limit must be a positive whole number");
    let since: string | undefined;
    try {
      since = flag("since") === undefined ? undefined : sinceTime(flag("since")!);
    } catch (err) {
      return fail(runtime, (err as Error).message);
    }
    const events = await queryAudit(store, { since, actor: flag("actor"), outcome: outcome as AuditOutcome | undefined, limit });
    if (lastFlag(args, "json") === "true") runtime.print(JSON.stringify(events, null, 2));
    else runtime.print(formatAuditTable(events));
    return undefined;
  } finally {
    await store.close();
  }
}

function formatAuditTable(events: AuditEvent[]): string {
  const header = ["AT", "EVENT", "OUTCOME", "ACTOR", "ACTION", "STATUS", "REASON", "ROUTE", "REQUEST"];
  const rows = events.map((
    e,
  ) => [
    e.at,
    e.event,
    e.outcome,
    e.actor?.id ?? "-",
    e.action ?? "-",
    e.statusCode === undefined ? "-" : String(e.statusCode),
    e.reason ?? "-",
    e.routeName ?? `${e.method} ${e.pattern}`,
    e.requestId,
  ]);
  return alignColumns([header, ...rows]);
}
