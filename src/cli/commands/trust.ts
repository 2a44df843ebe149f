/**
 * `baton trust [--show | --revoke]`: whether this workspace's `.baton/config.json` applies. A
 * repository can ship the file, so its settings apply only once you trusted it as it is
 * (platform/config-file.ts); the record is in your own directory (platform/config-trust.ts).
 */
import { redactStoreUrl } from "../../core/store-url.js";
import { badInput } from "../../errors.js";
import { type ConfigTrust, configPath, configTrust, revokeConfigTrust, trustConfigFile } from "../../platform/config-file.js";
import { trustRecordPath } from "../../platform/config-trust.js";
import { resolveWorkspace } from "../../platform/workspace.js";
import type { Ctx } from "../context.js";

/** The settings as they may be shown: the store URL without a password. */
function shown(settings: Record<string, unknown>): Record<string, unknown> {
  return typeof settings.store === "string" ? { ...settings, store: redactStoreUrl(settings.store) } : settings;
}

function settingLines(settings: Record<string, unknown>): string[] {
  const keys = Object.keys(settings);
  if (keys.length === 0) return ["  (no settings)"];
  return keys.map((k) => `  ${k}: ${JSON.stringify(settings[k])}`);
}

function stateLine(t: ConfigTrust): string {
  switch (t.state) {
    case "absent":
      return `No ${t.file}: Baton's defaults apply.`;
    case "trusted":
      return `${t.file} is trusted (since ${t.trustedAt}): its settings apply.`;
    case "changed":
      return `${t.file} changed since you trusted it (${t.trustedAt}): Baton ignores it. Read it, then run \`baton trust\` if its settings are yours.`;
    default:
      return `${t.file} is not trusted: Baton ignores it. Read it, then run \`baton trust\` if its settings are yours.`;
  }
}

export async function trust(ctx: Ctx, o: { show?: boolean; revoke?: boolean }): Promise<void> {
  if (o.show && o.revoke) throw badInput("give --show or --revoke, not both");
  const ws = resolveWorkspace({ create: false, ...(ctx.root ? { root: ctx.root } : {}) });
  const record = trustRecordPath(ws.dir);
  if (o.show) {
    const t = configTrust(ws.dir);
    return ctx.out({ ...t, record }, () => stateLine(t));
  }
  if (o.revoke) {
    const revoked = revokeConfigTrust(ws.dir);
    const t = configTrust(ws.dir);
    return ctx.out({ ...t, revoked, record }, () =>
      revoked
        ? `Trust revoked: Baton ignores ${t.file} until you run \`baton trust\` again.`
        : `${t.file} was not trusted here; nothing to revoke.`,
    );
  }
  const { settings, record: r, before } = trustConfigFile(ws.dir);
  const file = configPath(ws.dir);
  const out = {
    file,
    state: "trusted",
    keys: Object.keys(settings),
    trustedAt: r.trustedAt,
    before,
    settings: shown(settings),
    sha256: r.sha256,
    record,
  };
  ctx.out(out, () =>
    [
      `${file} asks for:`,
      ...settingLines(shown(settings)),
      `Trusted: these settings now apply in ${ws.root} (recorded in ${record}).`,
      "An edit to the file makes it untrusted again until you run `baton trust` again; `baton trust --revoke` undoes this.",
    ].join("\n"),
  );
}
