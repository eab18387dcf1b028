/**
 * Command-line words into positionals and flags (`parseCommandLine`): `--name value`,
 * `--name=value`, repeated flags collect into lists, switches are `"true"`/`"false"`.
 * `node:util` runs on Node and Deno; workerd has no command line.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError } from "./errors.ts";

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string[]>;
}

export function lastFlag(args: ParsedArgs, name: string): string | undefined {
  return args.flags.get(name)?.at(-1);
}

/** What a command accepts: flag names, and whether each takes a value or is a switch. */
export type FlagSpecs = Record<string, { boolean?: boolean }>;

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, "1": true, "0": false, yes: true, no: false };

/**
 * Strict command-line parsing for commands with a known set of flags, on `node:util`'s
 * `parseArgs` (Node and Deno alike): an unknown flag is `CONFIG_UNKNOWN_FLAG`, a value flag
 * without its value `CONFIG_MISSING_VALUE` (so `--issuer --addr x` never makes the issuer
 * "--addr"). Switches are `"true"`/`"false"` (`--x=false` works). `-h` is read as `--help` when
 * the command knows `help`.
 */
export function parseCommandLine(argv: readonly string[], specs: FlagSpecs): ParsedArgs {
  const options: ParseArgsConfig["options"] = {};
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = { type: spec.boolean ? "boolean" : "string", multiple: true, ...(name === "help" ? { short: "h" } : {}) };
  }
  // Not strict: parseArgs' own errors name no codes; the tokens are checked below against `specs`.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined;
    if (!spec || (token.rawName.length === 2 && token.name !== "help")) {
      throw new ConfigError("CONFIG_UNKNOWN_FLAG", `unknown option ${token.rawName}`, `flag:${token.rawName}`);
    }
    const name = token.name;
    if (spec.boolean) {
      const text = token.inlineValue ? token.value!.toLowerCase() : "true";
      const value = BOOLEAN_WORDS[text];
      if (value === undefined) throw new ConfigError("CONFIG_INVALID_VALUE", `--${name} takes no value or true/false, got "${text}"`, `flag:--${name}`);
      add(name, String(value));
      continue;
    }
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith("--") && token.value.length > 2)) {
      throw new ConfigError("CONFIG_MISSING_VALUE", `--${name} needs a value (--${name} VALUE or --${name}=VALUE)`, `flag:--${name}`);
    }
    add(name, token.value);
  }
  // A value flag that took the next word ("--issuer --addr") left that word's own flag unread:
  // refused above; one that took a positional is what was meant.
  return { positionals, flags };
}
