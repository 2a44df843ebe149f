/** `$BROWSER` as `baton dashboard --open` reads it (cli/commands/dashboard.ts), as other tools read it. */
import { describe, expect, it } from "vitest";
import { browserCommands } from "../src/cli/commands/dashboard.js";

const url = "http://127.0.0.1:4000/dashboard#login=abc";

describe("$BROWSER", () => {
  it("is a colon-separated list of commands, with %s for the URL or the URL appended", () => {
    expect(browserCommands(url, "firefox --new-tab %s:w3m", "linux")).toEqual([
      ["firefox", ["--new-tab", url]],
      ["w3m", [url]],
    ]);
    expect(browserCommands(url, "my-open --url=%s --pct=100%%", "linux")).toEqual([["my-open", [`--url=${url}`, "--pct=100%"]]]);
    expect(browserCommands(url, "echo 100%%", "linux")).toEqual([["echo", ["100%", url]]]);
    expect(browserCommands(url, " : chromium :", "linux")).toEqual([["chromium", [url]]]);
  });

  it("falls back to the platform's opener", () => {
    expect(browserCommands(url, undefined, "linux")).toEqual([["xdg-open", [url]]]);
    expect(browserCommands(url, "", "darwin")).toEqual([["open", [url]]]);
    expect(browserCommands(url, "", "win32")).toEqual([["cmd", ["/c", "start", "", url]]]);
  });
});
