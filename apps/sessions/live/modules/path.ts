/**
 * The `path` module: POSIX path functions (Node's `path.posix` semantics), pure. The working
 * directory of `resolve` is `/`, the worktree root as the sandbox names it. The import resolver
 * uses the same functions.
 */
import type { HostValue, NativeModule } from "#lib/sandbox";

export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  const trailing = path.endsWith("/");
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
    } else out.push(segment);
  }
  let result = out.join("/");
  if (result === "" && !absolute) result = ".";
  if (result !== "" && trailing) result += "/";
  return (absolute ? "/" : "") + result;
}

export function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

export function resolve(...parts: string[]): string {
  let resolved = "";
  for (let i = parts.length - 1; i >= 0 && !resolved.startsWith("/"); i--) {
    if (parts[i] !== "") resolved = resolved === "" ? parts[i]! : `${parts[i]}/${resolved}`;
  }
  const n = normalize("/" + resolved);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

function trimTrailing(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  return path.slice(0, end);
}

export function dirname(path: string): string {
  if (path === "") return ".";
  const rooted = path.startsWith("/");
  // The slash before the last segment (trailing slashes skipped), as Node finds it.
  let end = -1;
  let inTrailing = true;
  for (let i = path.length - 1; i >= 1; i--) {
    if (path[i] === "/") {
      if (!inTrailing) {
        end = i;
        break;
      }
    } else inTrailing = false;
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return path.slice(0, end);
}

export function basename(path: string, ext?: string): string {
  const p = trimTrailing(path);
  const base = p === "/" ? "" : p.slice(p.lastIndexOf("/") + 1);
  return ext && base !== ext && base.endsWith(ext) ? base.slice(0, -ext.length) : base;
}

export function extname(path: string): string {
  const base = basename(path);
  const i = base.lastIndexOf(".");
  return i <= 0 || base === ".." ? "" : base.slice(i);
}

export function relative(from: string, to: string): string {
  const a = resolve(from).split("/").filter(Boolean);
  const b = resolve(to).split("/").filter(Boolean);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return [...Array(a.length - i).fill(".."), ...b.slice(i)].join("/");
}

export interface ParsedPath {
  root: string;
  dir: string;
  base: string;
  ext: string;
  name: string;
}

export function parse(path: string): ParsedPath {
  const root = path.startsWith("/") ? "/" : "";
  const base = basename(path);
  const ext = extname(path);
  // The text before the last segment (without the slash that separates them).
  const trimmed = trimTrailing(path);
  const cut = trimmed.lastIndexOf("/");
  const dir = cut < 0 ? "" : cut === 0 ? "/" : trimmed.slice(0, cut);
  return { root, dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
}

export function format(p: Partial<ParsedPath>): string {
  const dir = p.dir || p.root || "";
  const base = p.base || `${p.name ?? ""}${p.ext ? (p.ext.startsWith(".") ? p.ext : "." + p.ext) : ""}`;
  if (!dir) return base;
  return dir === p.root ? `${dir}${base}` : `${dir}/${base}`;
}

function str(name: string, v: HostValue): string {
  if (typeof v !== "string") throw new TypeError(`The "${name}" argument must be of type string`);
  return v;
}

/** The module as the sandbox sees it. */
export function pathModule(): NativeModule {
  return {
    values: { sep: "/", delimiter: ":" },
    functions: {
      normalize: (p) => normalize(str("path", p)),
      join: (...parts) => join(...parts.map((p) => str("path", p))),
      resolve: (...parts) => resolve(...parts.map((p) => str("path", p))),
      isAbsolute: (p) => isAbsolute(str("path", p)),
      dirname: (p) => dirname(str("path", p)),
      basename: (p, ext) => basename(str("path", p), ext === undefined ? undefined : str("ext", ext)),
      extname: (p) => extname(str("path", p)),
      relative: (from, to) => relative(str("from", from), str("to", to)),
      parse: (p) => ({ ...parse(str("path", p)) }),
      format: (p) => {
        if (p === null || typeof p !== "object" || Array.isArray(p) || p instanceof Uint8Array) {
          throw new TypeError('The "pathObject" argument must be an object');
        }
        const o = p as Record<string, HostValue>;
        const field = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
        return format({ root: field("root"), dir: field("dir"), base: field("base"), name: field("name"), ext: field("ext") });
      },
    },
  };
}
