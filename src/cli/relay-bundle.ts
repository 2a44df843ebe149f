/** `baton hook <agent> --relay`: dist/hook.cjs runs the relay (hooks/relay.ts), as when bin/baton.cjs starts it. */
export function runRelayBundle(): void {
  const load = (globalThis as Record<symbol, ((file: string) => void) | undefined>)[Symbol.for("baton.load")];
  if (load) load(`${__dirname}/hook.cjs`);
  else require(`${__dirname}/hook.cjs`);
}
