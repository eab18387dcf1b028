/**
 * YAML, loaded on first use (also by report.ts, which a bundled entry would otherwise load at start). `yaml` is the largest module graph a command line would load
 * at start (about 70 modules); a server started without config, profile or users files never
 * needs it, so its first answer does not wait for it.
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
