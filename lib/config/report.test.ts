import { expect, test } from "vitest";
import { parse } from "yaml";
import { resolveSection } from "./layers.ts";
import { formatFieldTable, formatJson, formatYaml, maskSecret } from "./report.ts";
import { defineSection, listField, stringField } from "./section.ts";

const section = defineSection({
  key: "demo",
  envPrefix: "DEMO_",
  fields: {
    name: stringField({ default: "anon", description: "" }),
    tags: listField({ default: ["a", "b"], description: "" }),
    token: stringField({ default: "", secret: true, description: "" }),
  },
});

const resolved = resolveSection(section, [
  { field: "name", raw: "x", kind: "text", source: "flag:--name" },
  { field: "token", raw: "supersecretvalue", kind: "text", source: "env:DEMO_TOKEN" },
]);

test("secrets show at most 4 characters and at most a third of the secret", () => {
  expect(maskSecret("")).toBe("");
  expect(maskSecret("supersecretvalue")).toBe("supe***");
  expect(maskSecret("abcdef")).toBe("ab***");
  expect(maskSecret("ab")).toBe("***");
});

test("the field table lists value and source per field, secrets masked", () => {
  expect(formatFieldTable(section, resolved).split("\n")).toEqual([
    "field  value    source",
    "name   x        flag:--name",
    "tags   a, b     default",
    "token  supe***  env:DEMO_TOKEN",
  ]);
});

test("the YAML output is a config file, commented with sources", async () => {
  const text = await formatYaml(section, resolved, "header");
  expect(text).toContain("name: x # flag:--name");
  expect(text).toContain("tags: # default");
  expect(text).toContain("token: supe*** # env:DEMO_TOKEN");
  expect(text.startsWith("# header")).toBe(true);
  expect(parse(text)).toEqual({ demo: { name: "x", tags: ["a", "b"], token: "supe***" } });
  expect(JSON.parse(formatJson(section, resolved))).toEqual({ demo: { name: "x", tags: ["a", "b"], token: "supe***" } });
});

test("an empty list is written `[]` on its key's line, with its source", async () => {
  const empty = resolveSection(section, [{ field: "tags", raw: "", kind: "text", source: "env:DEMO_TAGS" }]);
  expect(empty.values.tags).toEqual([]);
  const text = await formatYaml(section, empty);
  expect(text).toContain("  tags: [] # env:DEMO_TAGS\n");
  expect(parse(text).demo.tags).toEqual([]);
});
