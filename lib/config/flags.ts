/**
 * Command-line words into positionals and flags. `--name value`, `--name=value`, repeated flags
 * collect into lists, and `--bool` with no value (or followed by another flag) is `"true"`.
 */
export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string[]>;
}

export function parseArgs(argv: readonly string[], booleanFlags: readonly string[] = []): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!word.startsWith("--")) {
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    if (eq > 0) {
      add(word.slice(2, eq), word.slice(eq + 1));
      continue;
    }
    const name = word.slice(2);
    const next = argv[i + 1];
    if (booleanFlags.includes(name) || next === undefined || next.startsWith("--")) add(name, "true");
    else {
      add(name, next);
      i++;
    }
  }
  return { positionals, flags };
}

export function lastFlag(args: ParsedArgs, name: string): string | undefined {
  return args.flags.get(name)?.at(-1);
}
