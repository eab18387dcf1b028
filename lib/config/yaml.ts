/**
 * YAML parsing, loaded on first use. `yaml` is the largest module graph a command line would load
 * at start (about 70 modules); a server started without config, profile or users files never
 * needs it, so its first answer does not wait for it.
 */
let yamlModule: Promise<typeof import("yaml")> | undefined;

/** Parses YAML (a superset of JSON, so one parser reads both spellings). Throws on bad input. */
export async function parseYaml(text: string): Promise<unknown> {
  const { parse } = await (yamlModule ??= import("yaml"));
  return parse(text);
}
