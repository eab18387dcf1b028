/**
 * YAML, loaded on first use. `yaml` is the largest module graph a command line would load at start
 * (about 70 modules); a server started without config, profile or users files never needs it, so
 * its first answer does not wait for it. Every importer goes through here, report.ts too: a
 * bundled entry inlines report.ts, and a static import there would load `yaml` at start.
 */
let yamlModule: Promise<typeof import("yaml")> | undefined;

/** The `yaml` package, imported once on first use. */
export function loadYaml(): Promise<typeof import("yaml")> {
  return (yamlModule ??= import("yaml"));
}

/** Parses YAML (a superset of JSON, so one parser reads both spellings). Throws on bad input. */
export async function parseYaml(text: string): Promise<unknown> {
  const { parse } = await loadYaml();
  return parse(text);
}
