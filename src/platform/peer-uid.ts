/**
 * Which local user opened a TCP connection to us over loopback: the uid the kernel lists for
 * the client's end of the connection (Linux: /proc/net/tcp and tcp6, whose rows name each
 * socket's local and remote address and port, its state and its owner). Another local user's
 * process can send any header a browser would (an Origin, say), but not another uid.
 *
 * The client's row is found by the whole connection, both addresses and both ports: ports alone
 * would also match a row of ours when a client binds another loopback address to our port
 * (127.0.0.2:<our port> → 127.0.0.1:<our port>). Exactly one established row must match.
 */
import { readFileSync } from "node:fs";
import { isIPv4 } from "node:net";
import { endianness } from "node:os";

export interface Connection {
  /** The client's address and port, as the server's socket sees them (`remoteAddress`, `remotePort`). */
  clientAddress: string;
  clientPort: number;
  /** The server's own end (`localAddress`, `localPort`). */
  serverAddress: string;
  serverPort: number;
}

/** The uid owning the client's end of `c`, as the kernel lists it; undefined when no single row says (or no /proc). */
export function peerUid(c: Connection): number | undefined {
  const tables: [file: string, encode: (a: string) => string | undefined][] = [
    ["/proc/net/tcp", v4Hex],
    ["/proc/net/tcp6", v6Hex],
  ];
  const found: number[] = [];
  for (const [file, encode] of tables) {
    const client = encode(c.clientAddress);
    const server = encode(c.serverAddress);
    if (client === undefined || server === undefined) continue;
    const local = `${client}:${portHex(c.clientPort)}`;
    const remote = `${server}:${portHex(c.serverPort)}`;
    let text: string;
    try {
      text = readFileSync(file, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
      const f = line.trim().split(/\s+/);
      if (f[1]?.toUpperCase() !== local || f[2]?.toUpperCase() !== remote) continue;
      if (f[3] === "0A" || f[3] === "06") continue; // listening, time-wait: not a live client end
      const uid = Number(f[7]);
      if (Number.isSafeInteger(uid)) found.push(uid);
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

function portHex(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, "0");
}

/** Bytes as /proc prints an address: 32-bit words, each in this machine's byte order. */
function words(bytes: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += 4) {
    const w = bytes.slice(i, i + 4);
    if (endianness() === "LE") w.reverse();
    out.push(w.map((b) => b.toString(16).padStart(2, "0")).join(""));
  }
  return out.join("").toUpperCase();
}

function v4Bytes(a: string): number[] | undefined {
  if (!isIPv4(a)) return undefined;
  return a.split(".").map(Number);
}

/** An IPv4 address (or an IPv4-mapped IPv6 one) as /proc/net/tcp writes it. */
function v4Hex(a: string): string | undefined {
  const b = v4Bytes(a.startsWith("::ffff:") ? a.slice(7) : a);
  return b ? words(b) : undefined;
}

/** An IPv6 address (IPv4 ones as mapped) as /proc/net/tcp6 writes it. */
function v6Hex(a: string): string | undefined {
  const v4 = v4Bytes(a);
  if (v4) return words([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4]);
  const [head, tail, extra] = a.toLowerCase().split("::");
  if (extra !== undefined) return undefined;
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  let groups = part(head);
  let rest = part(tail);
  // A trailing dotted IPv4 (::ffff:127.0.0.1) is two groups.
  const last = (tail === undefined ? groups : rest).at(-1);
  if (last?.includes(".")) {
    const b = v4Bytes(last);
    if (!b) return undefined;
    const two = [((b[0] as number) << 8) | (b[1] as number), ((b[2] as number) << 8) | (b[3] as number)].map((n) => n.toString(16));
    if (tail === undefined) groups = [...groups.slice(0, -1), ...two];
    else rest = [...rest.slice(0, -1), ...two];
  }
  const fill = tail === undefined ? [] : Array(8 - groups.length - rest.length).fill("0");
  const all = [...groups, ...fill, ...rest];
  if (all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return words(all.flatMap((g) => [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 0xff]));
}
