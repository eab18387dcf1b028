import { describe, expect, test } from "vitest";
import * as v from "valibot";
import { ConfigError } from "./errors.ts";
import { parseCommandLine } from "./flags.ts";
import { loadSection } from "./load.ts";
import { booleanField, defineSection, envName, listField, stringField } from "./section.ts";

const section = defineSection({
  key: "demo",
  envPrefix: "DEMO_",
  fields: {
    name: stringField({ default: "anon", positional: 0, description: "a name" }),
    port: stringField({ default: "80", description: "a port", check: v.pipe(v.string(), v.regex(/^\d+$/, "expected digits")) }),
    tags: listField({ default: ["a", "b"], description: "tags" }),
    verbose: booleanField({ default: false, description: "chatty" }),
    token: stringField({ default: "", secret: true, env: "DEMO_SECRET_TOKEN", description: "a secret" }),
  },
});

const FLAGS = { name: {}, port: {}, tags: {}, verbose: { boolean: true }, token: {}, "config-file": {}, profile: {} };

function files(map: Record<string, string>) {
  const reads: string[] = [];
  return { reads, readTextFile: async (path: string) => (reads.push(path), map[path]) };
}

async function load(argv: string[], env: Record<string, string> = {}, fileMap: Record<string, string> = {}) {
  const f = files(fileMap);
  const result = await loadSection({
    section,
    app: "demo",
    args: parseCommandLine(argv, FLAGS),
    env: { HOME: "/home/u", ...env },
    readTextFile: f.readTextFile,
  });
  return { ...result, reads: f.reads };
}

async function configError(promise: Promise<unknown>): Promise<ConfigError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

const PROFILES = "/home/u/.config/demo/profiles.yaml";

describe("precedence", () => {
  test("defaults everywhere when nothing is set", async () => {
    const r = await load([]);
    expect(r.values).toEqual({ name: "anon", port: "80", tags: ["a", "b"], verbose: false, token: "" });
    expect(Object.values(r.sources)).toEqual(["default", "default", "default", "default", "default"]);
    expect(r.profile).toEqual({ name: "default", source: "default" });
    expect(r.reads).toEqual([PROFILES]);
  });

  test("each layer beats the ones below: profile < config < env < positional < flag", async () => {
    const fileMap = {
      [PROFILES]: "default:\n  demo:\n    name: from-profile\n    port: 1\n    tags: [p]\n    verbose: true\n",
      "one.yaml": "demo:\n  name: from-config\n  port: 2\n",
      "two.yaml": "demo:\n  name: from-config-2\n",
    };
    const env = { DEMO_NAME: "from-env", DEMO_PORT: "3" };
    expect((await load(["--config-file", "one.yaml"], {}, fileMap)).sources).toMatchObject({
      name: "config:one.yaml",
      port: "config:one.yaml",
      tags: "profile:default",
      verbose: "profile:default",
    });
    const later = await load(["--config-file", "one.yaml", "--config-file", "two.yaml"], {}, fileMap);
    expect(later.values.name).toBe("from-config-2");
    expect(later.sources.name).toBe("config:two.yaml");
    expect(later.sources.port).toBe("config:one.yaml");
    const withEnv = await load(["--config-file", "one.yaml"], env, fileMap);
    expect(withEnv.values).toMatchObject({ name: "from-env", port: "3", tags: ["p"], verbose: true });
    expect(withEnv.sources).toMatchObject({ name: "env:DEMO_NAME", port: "env:DEMO_PORT" });
    const positional = await load(["from-positional", "--config-file", "one.yaml"], env, fileMap);
    expect(positional.values.name).toBe("from-positional");
    expect(positional.sources.name).toBe("positional:0");
    const flag = await load(["from-positional", "--name", "from-flag", "--config-file", "one.yaml"], env, fileMap);
    expect(flag.values.name).toBe("from-flag");
    expect(flag.sources.name).toBe("flag:--name");
  });

  test("an empty environment variable counts as unset; a field may name its own variable", async () => {
    expect(envName(section, "token")).toBe("DEMO_SECRET_TOKEN");
    expect(envName(section, "tags")).toBe("DEMO_TAGS");
    const r = await load([], { DEMO_NAME: "  ", DEMO_SECRET_TOKEN: "s3cret" });
    expect(r.sources.name).toBe("default");
    expect(r.values.token).toBe("s3cret");
    expect(r.sources.token).toBe("env:DEMO_SECRET_TOKEN");
  });
});

describe("lists and booleans", () => {
  test("flags repeat or take commas; the env takes commas or a JSON list; files take YAML lists", async () => {
    expect((await load(["--tags", "x,y", "--tags", " z ", "--tags=w"])).values.tags).toEqual(["x", "y", "z", "w"]);
    expect((await load([], { DEMO_TAGS: "m, n,," })).values.tags).toEqual(["m", "n"]);
    expect((await load([], { DEMO_TAGS: '["j","k"]' })).values.tags).toEqual(["j", "k"]);
    expect((await load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo:\n  tags:\n    - q\n    - r\n" })).values.tags).toEqual(["q", "r"]);
    // A higher layer replaces a list; it does not append to it.
    expect((await load(["--tags", "f", "--config-file", "c.yaml"], { DEMO_TAGS: "e" }, { "c.yaml": "demo:\n  tags: [q]\n" })).values.tags).toEqual(["f"]);
  });

  test("booleans from switches, env words and YAML", async () => {
    expect((await load(["--verbose"])).values.verbose).toBe(true);
    expect((await load(["--verbose=false"], { DEMO_VERBOSE: "yes" })).values.verbose).toBe(false);
    expect((await load([], { DEMO_VERBOSE: "1" })).values.verbose).toBe(true);
    expect((await configError(load([], { DEMO_VERBOSE: "maybe" }))).code).toBe("CONFIG_INVALID_VALUE");
    expect((await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo:\n  verbose: sometimes\n" }))).message).toMatch(
      /verbose from config:c.yaml: expected true or false/,
    );
  });

  test("YAML numbers are read as text, null clears a field", async () => {
    const r = await load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo:\n  port: 8080\n  name:\n  tags:\n" });
    expect(r.values).toMatchObject({ port: "8080", name: "", tags: [] });
  });
});

describe("errors", () => {
  test("invalid values name the field and the source", async () => {
    const err = await configError(load([], { DEMO_PORT: "http" }));
    expect(err.code).toBe("CONFIG_INVALID_VALUE");
    expect(err.message).toBe("port from env:DEMO_PORT: expected digits");
    expect(err.source).toBe("env:DEMO_PORT");
    expect(err.field).toBe("port");
    expect((await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo:\n  name: [1, 2]\n" }))).message).toMatch(
      /^name from config:c.yaml: expected a string/,
    );
  });

  test("unknown fields, sections, flags and extra arguments", async () => {
    const unknownField = await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo:\n  nmae: x\n" }));
    expect(unknownField.code).toBe("CONFIG_UNKNOWN_FIELD");
    expect(unknownField.message).toContain('unknown field "nmae" under demo in config:c.yaml');
    expect((await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "dmeo:\n  name: x\n" }))).code).toBe("CONFIG_UNKNOWN_SECTION");
    expect(() => parseCommandLine(["--nmae", "x"], FLAGS)).toThrow(expect.objectContaining({ code: "CONFIG_UNKNOWN_FLAG" }));
    expect(() => parseCommandLine(["--name", "--port", "1"], FLAGS)).toThrow(expect.objectContaining({ code: "CONFIG_MISSING_VALUE" }));
    expect(() => parseCommandLine(["-x"], FLAGS)).toThrow(expect.objectContaining({ code: "CONFIG_UNKNOWN_FLAG" }));
    expect((await configError(load(["a", "b"]))).code).toBe("CONFIG_TOO_MANY_ARGUMENTS");
  });

  test("config files: missing, malformed, not a map", async () => {
    expect((await configError(load(["--config-file", "nope.yaml"]))).code).toBe("CONFIG_FILE_NOT_FOUND");
    const bad = await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo: [unclosed\n" }));
    expect(bad.code).toBe("CONFIG_FILE_INVALID");
    expect(bad.message).toMatch(/^config file c.yaml is not valid YAML/);
    expect((await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "- a\n" }))).code).toBe("CONFIG_FILE_INVALID");
    expect((await configError(load(["--config-file", "c.yaml"], {}, { "c.yaml": "demo: 3\n" }))).code).toBe("CONFIG_INVALID_VALUE");
    // An empty file sets nothing.
    expect((await load(["--config-file", "c.yaml"], {}, { "c.yaml": "" })).sources.name).toBe("default");
  });
});

describe("profiles", () => {
  const fileMap = { [PROFILES]: "default:\n  demo:\n    name: d\nstaging:\n  demo:\n    name: s\n    port: 443\n" };

  test("the flag beats the environment variable, which beats default", async () => {
    expect((await load([], {}, fileMap)).values.name).toBe("d");
    const fromEnv = await load([], { DEMO_PROFILE: "staging" }, fileMap);
    expect(fromEnv.values).toMatchObject({ name: "s", port: "443" });
    expect(fromEnv.sources.port).toBe("profile:staging");
    expect(fromEnv.profile).toEqual({ name: "staging", source: "env:DEMO_PROFILE" });
    const fromFlag = await load(["--profile", "default"], { DEMO_PROFILE: "staging" }, fileMap);
    expect(fromFlag.values.name).toBe("d");
    expect(fromFlag.profile.source).toBe("flag:--profile");
  });

  test("the file lives under $XDG_CONFIG_HOME when set", async () => {
    const r = await load(["--profile", "x"], { XDG_CONFIG_HOME: "/xdg/" }, { "/xdg/demo/profiles.yaml": "x:\n  demo:\n    name: xdg\n" });
    expect(r.values.name).toBe("xdg");
    expect(r.profilesFile).toBe("/xdg/demo/profiles.yaml");
  });

  test("default profile: missing file or entry is skipped; any other profile must exist", async () => {
    expect((await load([])).sources.name).toBe("default");
    expect((await load(["--profile", "default"], {}, { [PROFILES]: "staging: {}\n" })).sources.name).toBe("default");
    const missingFile = await configError(load(["--profile", "staging"]));
    expect(missingFile.code).toBe("PROFILES_FILE_MISSING");
    expect(missingFile.message).toContain(PROFILES);
    const missingProfile = await configError(load([], { DEMO_PROFILE: "prod" }, fileMap));
    expect(missingProfile.code).toBe("PROFILE_NOT_FOUND");
    expect(missingProfile.message).toContain("profiles there: default, staging");
    expect((await configError(load([], {}, { [PROFILES]: "default:\n  demo:\n    bogus: 1\n" }))).code).toBe("CONFIG_UNKNOWN_FIELD");
    expect((await configError(load([], {}, { [PROFILES]: "just text\n" }))).code).toBe("PROFILES_FILE_INVALID");
    expect((await configError(load([], {}, { [PROFILES]: "default:\n  other:\n    name: x\n" }))).code).toBe("CONFIG_UNKNOWN_SECTION");
  });
});

describe("command line", () => {
  test("-h is --help, words after -- are positional, --x=v keeps '=' inside the value", () => {
    const parsed = parseCommandLine(["-h", "--name=a=b", "--", "--not-a-flag"], { ...FLAGS, help: { boolean: true } });
    expect(parsed.flags.get("help")).toEqual(["true"]);
    expect(parsed.flags.get("name")).toEqual(["a=b"]);
    expect(parsed.positionals).toEqual(["--not-a-flag"]);
    expect(() => parseCommandLine(["--verbose=perhaps"], FLAGS)).toThrow(expect.objectContaining({ code: "CONFIG_INVALID_VALUE" }));
  });
});
