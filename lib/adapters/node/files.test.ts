import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostRoots } from "#lib/files";
import { fileTreeContract } from "#lib/files/tree-contract";
import { nodeFileTree, nodeHostPaths } from "./files.ts";

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function worktree() {
  const base = await mkdtemp(join(tmpdir(), "tree-"));
  made.push(base);
  const root = join(base, "root");
  await mkdir(join(root, "dir"), { recursive: true });
  await writeFile(join(root, "a.txt"), "A");
  await writeFile(join(root, "dir", "b.txt"), "B");
  await writeFile(join(base, "secret.txt"), "SECRET");
  await mkdir(join(base, "outside"));
  return { base, root, tree: nodeFileTree() };
}

describe("nodeFileTree", () => {
  fileTreeContract(worktree);

  it("refuses symlinks that resolve outside the root, for reads, writes and listings", async () => {
    const { base, root, tree } = await worktree();
    await symlink(join(base, "secret.txt"), join(root, "link.txt"));
    await symlink(join(base, "outside"), join(root, "outdir"));
    await symlink(join(base, "missing.txt"), join(root, "dangling.txt"));
    await expect(tree.readText(root, "link.txt")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await expect(tree.writeText(root, "link.txt", "pwned")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await expect(tree.writeText(root, "outdir/new.txt", "pwned")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await expect(tree.writeText(root, "dangling.txt", "pwned")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await expect(tree.list(root, "outdir")).rejects.toMatchObject({ code: "INVALID_PATH" });
    expect((await tree.list(root, "")).map((e) => e.name)).toEqual(["a.txt", "dir"]);
    expect(await readFile(join(base, "secret.txt"), "utf8")).toBe("SECRET");
    await expect(readFile(join(base, "missing.txt"))).rejects.toThrow();
    await expect(readFile(join(base, "outside", "new.txt"))).rejects.toThrow();
  });

  it("follows symlinks that stay inside the root; removing a link keeps its target", async () => {
    const { root, tree } = await worktree();
    await symlink(join(root, "dir"), join(root, "alias"));
    expect(await tree.readText(root, "alias/b.txt")).toBe("B");
    expect(await tree.kind(root, "alias")).toBe("directory");
    await tree.remove(root, "alias");
    expect(await tree.readText(root, "dir/b.txt")).toBe("B");
  });

  it("a root that does not exist has nothing in it", async () => {
    const tree = nodeFileTree();
    expect(await tree.kind("/no/such/root", "")).toBeUndefined();
    await expect(tree.readText("/no/such/root", "a.txt")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
  });
});

describe("nodeHostPaths with hostRoots (worktree roots on real symlinks)", () => {
  it("a path is judged where its symlinks lead; a root that is itself a symlink counts as its target", async () => {
    const { base, root } = await worktree();
    await symlink(join(base, "outside"), join(root, "out"));
    await symlink(root, join(base, "root-link"));
    const { realPath, tempDirectory } = nodeHostPaths();
    expect(tempDirectory()).toBe(tmpdir());
    const roots = await hostRoots(realPath, [join(base, "root-link")]);
    expect(roots.roots).toEqual([await realPath(root)]);
    for (const inside of [root, `${root}/`, join(root, "dir"), join(root, "dir/new"), join(base, "root-link", "dir"), `${root}/dir/../dir`]) {
      expect(await roots.contains(inside), inside).toBe(true);
    }
    for (
      const outside of [base, join(root, "out"), join(root, "out", "x"), `${root}/..`, `${root}/dir/../../outside`, `${root}/missing/../../outside`, "/etc"]
    ) {
      expect(await roots.contains(outside), outside).toBe(false);
    }
    // `%2e%2e` is a name like any other on a disk: no decoding turns it into `..`.
    expect(await roots.contains(`${root}/%2e%2e/%2e%2e`)).toBe(true);
  });
});
