/**
 * Showing a resolved section to a person: a field/value/source table (`--print-parsed-fields`)
 * and the configuration as a YAML document in config-file shape, each value commented with its
 * source (`print-config`), or as JSON. Secret fields appear only as a short prefix.
 */
import { alignColumns } from "#lib/cli-output";
import type { Node as YamlNode, Pair } from "yaml";
import type { Resolved } from "./layers.ts";
import type { AnyFieldDef, SectionDef } from "./section.ts";
import { loadYaml } from "./yaml.ts";

/**
 * A prefix of at most 4 characters, and never more than a third of the secret, then `***`;
 * an empty secret stays empty (it means "none").
 */
export function maskSecret(secret: string): string {
  if (secret === "") return "";
  return secret.slice(0, Math.min(4, Math.floor(secret.length / 3))) + "***";
}

/** Field values as they may be shown: secrets masked. */
export function displayValues<F extends Record<string, AnyFieldDef>>(section: SectionDef<F>, resolved: Resolved<F>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(resolved.values).map(([field, value]) => [field, section.fields[field]!.secret && typeof value === "string" ? maskSecret(value) : value]),
  );
}

function showValue(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? "(empty list)" : value.join(", ");
  if (value === "") return "(empty)";
  return String(value);
}

/** An aligned `field  value  source` table, one field a line, in the section's field order. */
export function formatFieldTable<F extends Record<string, AnyFieldDef>>(section: SectionDef<F>, resolved: Resolved<F>): string {
  const shown = displayValues(section, resolved);
  const rows = [["field", "value", "source"], ...Object.keys(section.fields).map((f) => [f, showValue(shown[f]), resolved.sources[f]!])];
  return alignColumns(rows);
}

/** A config file that reproduces the resolved values (secrets masked), each commented with its source. */
export async function formatYaml<F extends Record<string, AnyFieldDef>>(section: SectionDef<F>, resolved: Resolved<F>, header?: string): Promise<string> {
  const { Document, isSeq } = await loadYaml();
  const doc = new Document({ [section.key]: displayValues(section, resolved) });
  const map = doc.get(section.key) as { items: Pair<YamlNode, YamlNode>[] };
  for (const pair of map.items) {
    const field = String((pair.key as unknown as { value: unknown }).value);
    const comment = ` ${resolved.sources[field]}`;
    // A block list puts the comment after the key; a scalar, or an empty list (`[]`), after its value.
    if (isSeq(pair.value) && pair.value.items.length > 0) pair.key.comment = comment;
    else {
      if (isSeq(pair.value)) pair.value.flow = true;
      pair.value!.comment = comment;
    }
  }
  if (header) doc.commentBefore = ` ${header}`;
  return doc.toString({ lineWidth: 0 }).trimEnd();
}

export function formatJson<F extends Record<string, AnyFieldDef>>(section: SectionDef<F>, resolved: Resolved<F>): string {
  return JSON.stringify({ [section.key]: displayValues(section, resolved) }, null, 2);
}
