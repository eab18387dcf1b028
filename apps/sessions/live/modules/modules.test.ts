import { createServer, type Server } from "node:http";
import { posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryFileTree } from "#lib/files";
import type { HostValue, NativeFunction, NativeModule } from "#lib/sandbox";
import { visibleEnv } from "./env.ts";
import { fsModule } from "./fs.ts";
import { hostAllowed, httpModule, type HttpModuleOptions, parseNetRule } from "./http.ts";
import * as path from "./path.ts";

/** A module function called as the sandbox calls it (`this.signal`: an evaluation that waits for it). */
const fn = (m: NativeModule, name: string) => (m.functions![name] as NativeFunction).bind({ signal: new AbortController().signal });

describe("path (posix, same answers as Node's path.posix)", () => {
  const samples = ["", ".", "/", "a", "a/b/../c", "/a/./b//c/", "..", "a/../..", "/..", "./x.tar.gz", ".bashrc", "a.", "dir/", "//a//b"];
  it.each(["normalize", "dirname", "basename", "extname", "isAbsolute", "parse"] as const)("%s", (name) => {
    // (Node's parse splits a final ".." into name "." and ext "."; ours keeps extname's answer.)
    for (const p of samples.filter((p) => name !== "parse" || !p.endsWith(".."))) {
      expect([p, (path[name] as (p: string) => unknown)(p)]).toEqual([p, (posix[name] as (p: string) => unknown)(p)]);
    }
  });
  it("join, resolve, relative, basename with ext, format", () => {
    const pairs: [string, string][] = [["a", "b"], ["/a", "../b"], ["a/", "/b"], ["", ""], ["/x/y", "/x/z/w"], [".", "a/.."]];
    for (const [a, b] of pairs) {
      expect(path.join(a, b)).toBe(posix.join(a, b));
      expect(path.resolve(a, b)).toBe(posix.resolve("/", a, b));
      expect(path.relative(a, b)).toBe(posix.relative(posix.resolve("/", a), posix.resolve("/", b)));
    }
    expect(path.basename("/a/b.txt", ".txt")).toBe("b");
    expect(path.format({ dir: "/a", name: "b", ext: ".c" })).toBe(posix.format({ dir: "/a", name: "b", ext: ".c" }));
    expect(path.format({ root: "/", base: "x" })).toBe(posix.format({ root: "/", base: "x" }));
  });
  it("the module refuses non-strings", () => {
    expect(() => fn(path.pathModule(), "join")("a", 1)).toThrow(TypeError);
  });
});

describe("fs", () => {
  const setup = (writable: string[] = []) => {
    const tree = memoryFileTree({ "w/a.txt": "A", "w/out/old.txt": "O" });
    return { tree, fs: fsModule({ tree, root: "/w", writable, maxReadChars: 10 }) };
  };
  const call = (m: NativeModule, name: string, ...args: HostValue[]) => Promise.resolve(fn(m, name)(...args));

  it("reads, lists, stats with Node's error codes", async () => {
    const { fs } = setup();
    expect(await call(fs, "readFile", "a.txt")).toBe("A");
    expect(await call(fs, "readdir", ".")).toEqual(["a.txt", "out"]);
    expect(await call(fs, "readdir")).toEqual(["a.txt", "out"]);
    expect(await call(fs, "stat", "out")).toEqual({ kind: "directory", isFile: false, isDirectory: true });
    expect(await call(fs, "exists", "nope")).toBe(false);
    expect(await call(fs, "exists", "../escape")).toBe(false);
    await expect(call(fs, "readFile", "nope")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(call(fs, "readFile", "out")).rejects.toMatchObject({ code: "EISDIR" });
    await expect(call(fs, "readFile", "../w/a.txt")).rejects.toMatchObject({ code: "EACCES" });
    await expect(call(fs, "readFile", 5)).rejects.toThrow(TypeError);
  });

  it("refuses files larger than the read cap", async () => {
    const { tree, fs } = setup([""]);
    await tree.writeText("/w", "big.txt", "x".repeat(11));
    await expect(call(fs, "readFile", "big.txt")).rejects.toMatchObject({ code: "EFBIG" });
  });

  it("writes only under the writable directories", async () => {
    const { tree, fs } = setup(["out"]);
    await call(fs, "writeFile", "out/new.txt", "N");
    await call(fs, "appendFile", "out/new.txt", new TextEncoder().encode("!"));
    expect(await tree.readText("/w", "out/new.txt")).toBe("N!");
    for (const [op, p] of [["writeFile", "a.txt"], ["writeFile", "outside.txt"], ["mkdir", "outx"], ["rm", "a.txt"], ["writeFile", "."]] as const) {
      await expect(call(fs, op, p, "x")).rejects.toMatchObject({ code: "EPERM" });
    }
    expect(await tree.readText("/w", "a.txt")).toBe("A");
  });

  it("mkdir and rm follow Node's rules for existing, missing and recursive", async () => {
    const { tree, fs } = setup([""]);
    await expect(call(fs, "mkdir", "x/y")).rejects.toMatchObject({ code: "ENOENT" });
    await call(fs, "mkdir", "x/y", { recursive: true });
    await expect(call(fs, "mkdir", "x")).rejects.toMatchObject({ code: "EEXIST" });
    await call(fs, "writeFile", "x/y/f.txt", "f");
    await expect(call(fs, "rm", "x")).rejects.toMatchObject({ code: "EISDIR" });
    await expect(call(fs, "unlink", "x")).rejects.toMatchObject({ code: "EISDIR" });
    await expect(call(fs, "rm", "missing")).rejects.toMatchObject({ code: "ENOENT" });
    await call(fs, "rm", "missing", { force: true });
    await call(fs, "rm", "x", { recursive: true });
    expect(await tree.kind("/w", "x")).toBeUndefined();
  });
});

describe("env", () => {
  it("shows exact names and prefixes only", () => {
    expect(visibleEnv({ A: "1", APP_X: "2", APPX: "3", B: undefined }, ["A", "APP_*", "B", "MISSING"])).toEqual({ A: "1", APP_X: "2" });
    expect(visibleEnv({ A: "1" }, [])).toEqual({});
  });
});

describe("http", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/redirect-same") return void res.writeHead(302, { location: "/echo" }).end();
      if (req.url === "/redirect-other") return void res.writeHead(302, { location: `http://localhost:${port}/echo` }).end();
      if (req.url === "/big") return void res.end("x".repeat(5000));
      if (req.url === "/slow") return void setTimeout(() => res.end("late"), 1000);
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        res.setHeader("x-method", req.method ?? "");
        res.end(JSON.stringify({ url: req.url, body, header: req.headers["x-test"] ?? null }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const module = (names: string[], o: Partial<HttpModuleOptions> = {}) =>
    httpModule({ rules: names.map((n) => parseNetRule(n)!), fetch: globalThis.fetch, timeoutMs: 2000, maxResponseBytes: 1024, maxRedirects: 5, ...o });
  const get = (m: NativeModule, url: string, init?: HostValue) => Promise.resolve(fn(m, "fetch")(url, init)) as Promise<Record<string, unknown>>;

  it("parses host rules", () => {
    expect(parseNetRule("Example.com")).toEqual({ wildcard: false, host: "example.com", port: undefined });
    expect(parseNetRule("*.example.com:8443")).toEqual({ wildcard: true, host: "example.com", port: "8443" });
    expect(parseNetRule("[::1]:80")).toEqual({ wildcard: false, host: "[::1]", port: "80" });
    for (const bad of ["", "http://x", "a/b", "*", "x:y"]) expect(parseNetRule(bad)).toBeUndefined();
    const rules = ["api.test", "*.svc.test", "db.test:5432"].map((n) => parseNetRule(n)!);
    expect(hostAllowed(new URL("https://api.test/x"), rules)).toBe(true);
    expect(hostAllowed(new URL("http://a.svc.test:81/"), rules)).toBe(true);
    expect(hostAllowed(new URL("http://svc.test/"), rules)).toBe(false);
    expect(hostAllowed(new URL("http://db.test:5432/"), rules)).toBe(true);
    expect(hostAllowed(new URL("http://db.test/"), rules)).toBe(false);
    expect(hostAllowed(new URL("http://api.test.evil/"), rules)).toBe(false);
  });

  it("reaches an allowed host and copies the response", async () => {
    const m = module([`127.0.0.1:${port}`]);
    const r = await get(m, `http://127.0.0.1:${port}/echo`, { method: "post", headers: { "x-test": "yes" }, body: "payload" });
    expect(r).toMatchObject({ status: 200, statusText: "OK", url: `http://127.0.0.1:${port}/echo` });
    expect(JSON.parse(r.body as string)).toEqual({ url: "/echo", body: "payload", header: "yes" });
    expect((r.headers as Record<string, string>)["x-method"]).toBe("POST");
  });

  it("refuses hosts and ports no rule lists, and other protocols", async () => {
    const m = module([`127.0.0.1:${port + 1}`, "localhost"]);
    await expect(get(m, `http://127.0.0.1:${port}/echo`)).rejects.toMatchObject({ code: "ENETACCESS" });
    await expect(get(module([]), `http://127.0.0.1:${port}/echo`)).rejects.toMatchObject({ code: "ENETACCESS" });
    await expect(get(m, "file:///etc/passwd")).rejects.toThrow(TypeError);
  });

  it("follows redirects on the same host only", async () => {
    const m = module([`127.0.0.1:${port}`, "localhost"]);
    expect(JSON.parse((await get(m, `http://127.0.0.1:${port}/redirect-same`)).body as string).url).toBe("/echo");
    const other = await get(m, `http://127.0.0.1:${port}/redirect-other`);
    expect(other.status).toBe(302);
  });

  it("caps the response size and the time", async () => {
    // The size cap with a time limit a loaded machine cannot reach first.
    await expect(get(module([`127.0.0.1:${port}`], { timeoutMs: 60_000 }), `http://127.0.0.1:${port}/big`)).rejects.toMatchObject({
      code: "ERESPONSE_TOO_LARGE",
    });
    await expect(get(module([`127.0.0.1:${port}`], { timeoutMs: 100 }), `http://127.0.0.1:${port}/slow`)).rejects.toMatchObject({ code: "ETIMEDOUT" });
  });
});
