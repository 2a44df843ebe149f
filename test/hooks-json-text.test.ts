/**
 * json-text.ts: a settings file edited in place. Adding Baton's groups and taking them out again
 * touches nothing else: the user's bytes (layout, comments, trailing commas, tabs, CRLF) stay.
 */
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import { type HookAgent, installInto, uninstallFrom } from "../src/core/hooks/config.js";
import type { JsonObject } from "../src/core/types.js";
import { hookSpecs } from "../src/hooks/install.js";
import { rewriteJson } from "../src/hooks/json-text.js";

const value = (text: string) => parse(text, [], { allowTrailingComma: true }) as JsonObject;

/** Settings texts as people write them. */
const ORIGINALS: Record<string, string> = {
  pretty:
    '{\n  "model": "sonnet",\n  "hooks": {\n    "Stop": [\n      { "hooks": [{ "type": "command", "command": "notify" }] }\n    ]\n  }\n}\n',
  oneLine: '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}',
  minified: '{"model":"sonnet","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify"}]}]}}\n',
  tabs: '{\n\t"hooks": {\n\t\t"Stop": [{ "hooks": [{ "type": "command", "command": "notify" }] }]\n\t}\n}',
  crlfComments:
    '{\r\n  // team settings\r\n  "theme": "GitHub", /* dark later */\r\n  "hooks": {\r\n    // ours\r\n    "Stop": [{ "hooks": [{ "type": "command", "command": "notify" }] }], // trailing\r\n  },\r\n}\r\n',
  noHooks: '{\n  "model": "sonnet"\n}\n',
  afterUserGroup: '{\n  "hooks": {\n    "Notification": [{ "hooks": [{ "type": "command", "command": "say hi" }] }]\n  }\n}\n',
  trailingCommas: '{\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "command", "command": "notify" }] },],\n  },\n}\n',
  /** An empty `hooks` that install fills: uninstall cannot tell it from none by value; the backup can (below). */
  emptyHooks: '{\n  "hooks": {},\n  "model": "sonnet"\n}\n',
};

describe("rewriteJson", () => {
  for (const agent of ["claude", "codex", "gemini", "qwen"] as HookAgent[])
    for (const [name, original] of Object.entries(ORIGINALS).filter(([n]) => n !== "emptyHooks"))
      it(`${agent}, ${name}: Baton's groups in and out again leave the original bytes`, () => {
        const installed = rewriteJson(original, installInto(value(original), hookSpecs(agent, "baton"), agent));
        expect(value(installed)).toEqual(installInto(value(original), hookSpecs(agent, "baton"), agent));
        // Only insertions: every line of the original that Baton did not append to is still there.
        for (const line of original.split(/\r?\n/))
          if (!/"Stop"|"PreToolUse"|^\{"|"hooks": \{\}/.test(line)) expect(installed).toContain(line);
        const back = rewriteJson(installed, uninstallFrom(value(installed), agent).settings);
        expect(back).toBe(original);
      });

  it("Baton's group with another launcher is edited in place: it keeps its place and its layout", () => {
    const text =
      '{\n  "hooks": {\n    "Stop": [\n      { "hooks": [{ "type": "command", "command": "npx baton hook claude Stop" }] },\n      { "hooks": [{ "type": "command", "command": "mine" }] }\n    ]\n  }\n}\n';
    const next = installInto(value(text), hookSpecs("claude", "baton"), "claude");
    const out = rewriteJson(text, next);
    expect(
      out.startsWith(
        '{\n  "hooks": {\n    "Stop": [\n      { "hooks": [{ "type": "command", "command": "baton hook claude Stop", "timeout": 60 }] },\n      { "hooks": [{ "type": "command", "command": "mine" }] }\n    ],\n',
      ),
    ).toBe(true);
    expect(value(out).hooks).toEqual(next.hooks);
  });

  it("a container Baton's groups filled is taken out with them (the backup restores an empty one: hooks-install.int.test.ts)", () => {
    for (const original of [ORIGINALS.emptyHooks, '{\n  "hooks": {\n    "PreToolUse": []\n  }\n}\n'] as string[]) {
      const installed = rewriteJson(original, installInto(value(original), hookSpecs("claude", "baton"), "claude"));
      const removed = uninstallFrom(value(installed), "claude").settings;
      expect(value(rewriteJson(installed, removed))).toEqual(removed);
    }
  });

  it("taking the first of several items out keeps the comment above the next one, and a trailing comma stays valid", () => {
    const text = '{\n  "a": [\n    1,\n    // about two\n    2\n  ],\n  "b": { "only": true, },\n}\n';
    expect(rewriteJson(text, { a: [2], b: { only: true } })).toBe(text.replace("    1,\n    ", "    "));
    expect(rewriteJson(text, { a: [1, 2], b: {} })).toBe('{\n  "a": [\n    1,\n    // about two\n    2\n  ],\n  "b": { },\n}\n');
  });

  it("an empty root object gets its first key on a line of its own", () => {
    expect(rewriteJson("{}", { hooks: { Stop: [] } })).toBe('{\n  "hooks": {\n    "Stop": []\n  }\n}');
    expect(rewriteJson('{"a":1}', { a: 1, b: [true] })).toBe('{"a":1,"b":[true]}');
  });
});
