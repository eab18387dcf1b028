import { describe, expect, it } from "vitest";
import { HOST_MODULE, HTTPMOD_FILE, HTTPMOD_SOURCE } from "./httpmod-source.ts";

describe("the embedded httpmod source", () => {
  it("spells the names the host shares with it as the host does", () => {
    expect(HTTPMOD_SOURCE).toContain(`require(${JSON.stringify(HOST_MODULE)})`);
    expect(HTTPMOD_SOURCE).toContain(`indexOf(${JSON.stringify(HTTPMOD_FILE)})`);
  });

  it("carries no comments into the sandbox", () => {
    expect(HTTPMOD_SOURCE).not.toMatch(/^\s*(\/\/|\/\*)/m);
    expect(HTTPMOD_SOURCE.startsWith('"use strict";')).toBe(true);
  });
});
