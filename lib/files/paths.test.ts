import { describe, expect, it } from "vitest";
import { resolveRelativePath } from "./paths.ts";

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
  it("refuses the empty path and the root", () => {
    invalid("")();
    invalid("./")();
  });
});
