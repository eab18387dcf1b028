/**
 * Command-line words into positionals and flags (`parseCommandLine`): `--name value`,
 * `--name=value`, repeated flags collect into lists, switches are `"true"`/`"false"`.
 */
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
 * Strict command-line parsing for commands with a known set of flags: an unknown flag is
 * `CONFIG_UNKNOWN_FLAG`, a value flag without its value `CONFIG_MISSING_VALUE` (so `--issuer
 * --addr x` never makes the issuer "true"). Switches are `"true"`/`"false"` (`--x=false` works).
 * `-h` is read as `--help` when the command knows `help`.
 */
export function parseCommandLine(argv: readonly string[], specs: FlagSpecs): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  const spec = (name: string) => {
    const s = specs[name];
    if (!s) throw new ConfigError("CONFIG_UNKNOWN_FLAG", `unknown option --${name}`, `flag:--${name}`);
    return s;
  };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (word === "-h" && specs.help) {
      add("help", "true");
      continue;
    }
    if (!word.startsWith("--")) {
      if (word.startsWith("-") && word.length > 1) throw new ConfigError("CONFIG_UNKNOWN_FLAG", `unknown option ${word}`, `flag:${word}`);
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const name = eq > 0 ? word.slice(2, eq) : word.slice(2);
    const s = spec(name);
    if (s.boolean) {
      const text = eq > 0 ? word.slice(eq + 1).toLowerCase() : "true";
      const value = BOOLEAN_WORDS[text];
      if (value === undefined) throw new ConfigError("CONFIG_INVALID_VALUE", `--${name} takes no value or true/false, got "${text}"`, `flag:--${name}`);
      add(name, String(value));
      continue;
    }
    if (eq > 0) {
      add(name, word.slice(eq + 1));
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined || (next.startsWith("--") && next.length > 2)) {
      throw new ConfigError("CONFIG_MISSING_VALUE", `--${name} needs a value (--${name} VALUE or --${name}=VALUE)`, `flag:--${name}`);
    }
    add(name, next);
    i++;
  }
  return { positionals, flags };
}
