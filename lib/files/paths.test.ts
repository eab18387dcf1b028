import { describe, expect, it } from "vitest";
import { checkAbsolutePath, resolveRelativePath } from "./paths.ts";

const invalid = (p: string) => () => expect(() => resolveRelativePath(p)).toThrow(expect.objectContaining({ code: "INVALID_PATH" }));

describe("resolveRelativePath", () => {
  it("normalizes plain relative paths", () => {
    expect(resolveRelativePath("main.js")).toBe("main.js");
    expect(resolveRelativePath("./src//lib/./a.js")).toBe("src/lib/a.js");
    expect(resolveRelativePath("dir\\file.js")).toBe("dir/file.js");
    expect(resolveRelativePath("100%.js")).toBe("100%.js");
  });
  it("refuses absolute paths", invalid("/etc/passwd"));
  it("refuses backslash-absolute paths", invalid("\\etc\\passwd"));
  it("refuses drive letters", invalid("C:/x.js"));
  it("refuses .. segments", invalid("../secret.js"));
  it("refuses .. inside the path", invalid("a/../../b.js"));
  it("refuses percent-encoded dots", invalid("%2e%2e/secret.js"));
  it("refuses double-encoded dots", invalid("%252e%252e%252fsecret.js"));
  it("refuses encoded slashes that make an absolute path", invalid("%2fetc%2fpasswd"));
  it("refuses backslash traversal", invalid("..\\secret.js"));
  it("refuses NUL bytes", invalid("a.js\0.txt"));
  it("refuses a name over 255 bytes of UTF-8", () => {
    expect(resolveRelativePath(`dir/${"n".repeat(255)}`)).toBe(`dir/${"n".repeat(255)}`);
    invalid("n".repeat(256))();
    invalid(`dir/${"é".repeat(128)}`)();
  });
  it("refuses the empty path and the root", () => {
    invalid("")();
    invalid("./")();
  });
});

describe("checkAbsolutePath", () => {
  const bad = (p: string) => expect(() => checkAbsolutePath(p)).toThrow(expect.objectContaining({ code: "INVALID_PATH" }));
  it("takes absolute paths with names up to 255 bytes and at most 4095 bytes in all", () => {
    checkAbsolutePath("/");
    checkAbsolutePath(`/tmp/${"n".repeat(255)}`);
    checkAbsolutePath(`/${"d/".repeat(2000)}`);
  });
  it("refuses relative paths, NUL bytes, long names and long paths", () => {
    bad("tmp/x");
    bad("");
    bad("/tmp/a\0b");
    bad(`/tmp/${"n".repeat(256)}`);
    bad(`/${"d/".repeat(2048)}`);
  });
});
