/**
 * The behaviour every FileTree shares, as a test suite: run by each implementation's test with a
 * fresh tree whose root holds `a.txt` ("A") and `dir/b.txt` ("B").
 */
import { expect, it } from "vitest";
import type { FileTree } from "./tree.ts";

export function fileTreeContract(setup: () => Promise<{ tree: FileTree; root: string }>): void {
  it("reads files and tells files from directories", async () => {
    const { tree, root } = await setup();
    expect(await tree.readText(root, "a.txt")).toBe("A");
    expect(await tree.readText(root, "./dir//b.txt")).toBe("B");
    expect(await tree.readBytes(root, "dir/b.txt")).toEqual(new TextEncoder().encode("B"));
    await expect(tree.readBytes(root, "dir")).rejects.toMatchObject({ code: "NOT_A_FILE" });
    expect(await tree.kind(root, "a.txt")).toBe("file");
    expect(await tree.kind(root, "dir")).toBe("directory");
    expect(await tree.kind(root, "")).toBe("directory");
    expect(await tree.kind(root, "nope")).toBeUndefined();
    await expect(tree.readText(root, "nope.txt")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    await expect(tree.readText(root, "dir")).rejects.toMatchObject({ code: "NOT_A_FILE" });
  });

  it("refuses paths that leave the root", async () => {
    const { tree, root } = await setup();
    for (const p of ["../x", "/etc/passwd", "dir/../../x", "%2e%2e/x", "..%2fx"]) {
      await expect(tree.readText(root, p)).rejects.toMatchObject({ code: "INVALID_PATH" });
      await expect(tree.writeText(root, p, "x")).rejects.toMatchObject({ code: "INVALID_PATH" });
    }
  });

  it("refuses names the file system would refuse (over 255 bytes, NUL), in paths and in roots, the same everywhere", async () => {
    const { tree, root } = await setup();
    const long = "n".repeat(256);
    for (const p of [long, `dir/${long}.js`, `${"é".repeat(128)}.js`, "a\0b"]) {
      await expect(tree.readText(root, p)).rejects.toMatchObject({ code: "INVALID_PATH" });
      await expect(tree.writeText(root, p, "x")).rejects.toMatchObject({ code: "INVALID_PATH" });
      await expect(tree.kind(root, p)).rejects.toMatchObject({ code: "INVALID_PATH" });
    }
    expect(await tree.kind(root, "n".repeat(255))).toBeUndefined();
    for (const bad of [`${root}/${long}`, `${root}\0x`, `/${"d/".repeat(2100)}`]) {
      await expect(tree.readText(bad, "a.txt")).rejects.toMatchObject({ code: "INVALID_PATH" });
      await expect(tree.kind(bad, "")).rejects.toMatchObject({ code: "INVALID_PATH" });
    }
  });

  it("writes, creating parents, lists sorted, makes and removes directories", async () => {
    const { tree, root } = await setup();
    await tree.writeText(root, "new/deep/c.txt", "C");
    expect(await tree.readText(root, "new/deep/c.txt")).toBe("C");
    await tree.writeText(root, "a.txt", "A2");
    expect(await tree.readText(root, "a.txt")).toBe("A2");
    await tree.makeDirectory(root, "empty/inner");
    expect(await tree.kind(root, "empty/inner")).toBe("directory");
    expect(await tree.list(root, "")).toEqual([
      { name: "a.txt", kind: "file" },
      { name: "dir", kind: "directory" },
      { name: "empty", kind: "directory" },
      { name: "new", kind: "directory" },
    ]);
    expect(await tree.list(root, "empty/inner")).toEqual([]);
    await expect(tree.list(root, "a.txt")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await expect(tree.writeText(root, "a.txt/x", "x")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await expect(tree.writeText(root, "dir", "x")).rejects.toMatchObject({ code: "NOT_A_FILE" });
    await expect(tree.remove(root, "new")).rejects.toMatchObject({ code: "NOT_A_FILE" });
    await tree.remove(root, "new", { recursive: true });
    await tree.remove(root, "a.txt");
    await expect(tree.remove(root, "a.txt")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    expect((await tree.list(root, "")).map((e) => e.name)).toEqual(["dir", "empty"]);
  });
}
