import { describe, expect, it } from "vitest";
import { memoryBucket, r2FileTree } from "./r2.ts";
import { fileTreeContract } from "./tree-contract.ts";

describe("r2FileTree", () => {
  fileTreeContract(async () => ({ tree: r2FileTree(memoryBucket({ "w/t/a.txt": "A", "w/t/dir/b.txt": "B", "w/other.txt": "O" })), root: "/w/t" }));

  it("stores files under <root without leading slash>/<rel>, directories as .keep markers", async () => {
    const bucket = memoryBucket();
    const tree = r2FileTree(bucket);
    await tree.writeText("/work/t", "src/a.js", "x");
    await tree.makeDirectory("/work/t", "empty");
    expect(bucket.keys()).toEqual(["work/t/empty/.keep", "work/t/src/a.js"]);
    expect(await tree.list("/work/t", "empty")).toEqual([]);
    expect(await tree.kind("/work/other", "")).toBeUndefined();
  });

  it("follows list cursors when listing and removing", async () => {
    const files: Record<string, string> = { "r/keep.txt": "" };
    for (let i = 0; i < 2500; i++) files[`r/d/f${String(i).padStart(4, "0")}.txt`] = "";
    const bucket = memoryBucket(files);
    const tree = r2FileTree(bucket);
    expect(await tree.list("/r", "d")).toHaveLength(2500);
    await tree.remove("/r", "d", { recursive: true });
    expect(bucket.keys()).toEqual(["r/keep.txt"]);
  });
});
