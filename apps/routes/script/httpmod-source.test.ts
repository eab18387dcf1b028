import { describe, expect, it } from "vitest";
import { COMPACT_TYPES, DISPATCH_GLOBAL, HOST_MODULE, HTTPMOD_FILE, HTTPMOD_SOURCE } from "./httpmod-source.ts";

describe("the embedded httpmod source", () => {
  it("spells the names the host shares with it as the host does", () => {
    expect(HTTPMOD_SOURCE).toContain(`require(${JSON.stringify(HOST_MODULE)})`);
    expect(HTTPMOD_SOURCE).toContain(`indexOf(${JSON.stringify(HTTPMOD_FILE)})`);
    expect(HTTPMOD_SOURCE).toContain(`Object.defineProperty(globalThis, ${JSON.stringify(DISPATCH_GLOBAL)},`);
    const types = /const TYPES = (\[[^\]]*\])\.concat\(/.exec(HTTPMOD_SOURCE)?.[1];
    expect(types && (new Function(`return ${types}`)() as string[])).toEqual([...COMPACT_TYPES]);
  });

  it("carries no comments into the sandbox", () => {
    expect(HTTPMOD_SOURCE).not.toMatch(/^\s*(\/\/|\/\*)/m);
    expect(HTTPMOD_SOURCE.startsWith('"use strict";')).toBe(true);
  });
});
