/**
 * Which local user opened a TCP connection to us over loopback: the uid the kernel lists for
 * the client's end of the connection (Linux: /proc/net/tcp and tcp6, whose rows name each
 * socket's local and remote address and its owner). Another local user's process can send any
 * header a browser would (an Origin, say), but not another uid. Undefined where the platform
 * does not say (no /proc), or the connection is gone.
 */
import { readFileSync } from "node:fs";

/** The uid owning the client socket `clientPort` → `serverPort`, as the kernel lists it. */
export function peerUid(clientPort: number, serverPort: number): number | undefined {
  const want = `:${clientPort.toString(16).toUpperCase().padStart(4, "0")}`;
  const to = `:${serverPort.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
      const local = f[1];
      const remote = f[2];
      if (local?.endsWith(want) && remote?.endsWith(to)) {
        const uid = Number(f[7]);
        if (Number.isSafeInteger(uid)) return uid;
      }
    }
  }
  return undefined;
}
