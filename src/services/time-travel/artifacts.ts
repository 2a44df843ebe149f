/**
 * Session artifacts: files attached to a session (an annotated screenshot, the record of a
 * generated file) kept in the checkpoint blob store until the session completes (a small one
 * stored in the same transaction as its row). Each one is a
 * row (which keeps its blob alive while the session is active) and an `artifact:added` journal
 * event (so status can report one whose blob went missing).
 */
import { basename, resolve } from "node:path";
import type { ArtifactRow, Backend } from "../../backend/contract.js";
import { randomHex } from "../../core/canonical.js";
import type { ArtifactRecord } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import { NotASettingsFile, readSettingsBytes } from "../../platform/settings-text.js";
import type { Journal } from "../journal/journal.js";
import type { CheckpointService } from "./checkpoints.js";

export interface ArtifactInput {
  /** A file to attach (read now). */
  file?: string;
  /** Or the content itself. */
  content?: Uint8Array;
  /** Default: the file's base name. */
  name?: string;
  label?: string;
  mediaType?: string;
  actor?: string;
}

export interface ArtifactInfo extends ArtifactRecord {
  /** Whether its blob is in the store (false once released, or if it went missing). */
  present: boolean;
}

const NAME = /^[^\x00-\x1f/\\]{1,200}$/;

export class ArtifactService {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #cps: CheckpointService;
  readonly #now: () => Date;

  constructor(backend: Backend, journal: Journal, cps: CheckpointService, now: () => Date) {
    this.#backend = backend;
    this.#journal = journal;
    this.#cps = cps;
    this.#now = now;
  }

  async add(sessionId: string, input: ArtifactInput): Promise<ArtifactRecord> {
    if ((input.file === undefined) === (input.content === undefined)) throw badInput("give a file or the content of the artifact");
    let content: Uint8Array;
    if (input.file !== undefined) {
      // Opened without waiting (a FIFO would hang the command) and read only as a regular file of
      // at most the checkpoints' file limit (a link to /dev/zero would exhaust it).
      let read: Buffer | undefined;
      try {
        read = readSettingsBytes(resolve(this.#cps.root, input.file), this.#cps.maxFileBytes);
      } catch (err) {
        const why = err instanceof NotASettingsFile ? err.why : ((err as NodeJS.ErrnoException).code ?? (err as Error).message);
        throw badInput(`cannot read ${input.file} (${why})`);
      }
      // ENOENT, or ENOTDIR: a path through a file names nothing either.
      if (read === undefined) throw badInput(`cannot read ${input.file}: there is no such file`);
      content = read;
    } else content = input.content as Uint8Array;
    const name = input.name ?? (input.file !== undefined ? basename(input.file) : "");
    if (!NAME.test(name))
      throw badInput(`artifact name ${JSON.stringify(name)} is invalid: 1-200 characters, no slashes or control characters`);
    const blobs = this.#cps.blobs;
    const staged = blobs.stage(content);
    blobs.sync();
    const row: ArtifactRow = {
      id: `art-${randomHex(5)}`,
      sessionId,
      name,
      hash: staged.hash,
      size: staged.size,
      mediaType: input.mediaType ?? null,
      label: input.label ?? null,
      createdAt: this.#now().toISOString(),
    };
    await this.#backend.transaction("write", async (tx) => {
      const s = await tx.getSession(sessionId);
      if (!s)
        throw new BatonError("not_found", `no session "${sessionId}"; run \`baton session list --all\` to see the sessions`, { sessionId });
      if (s.status !== "active") {
        throw new BatonError("invalid_transition", `session ${sessionId} is completed; artifacts are kept only while a session is active`, {
          sessionId,
        });
      }
      // A small blob is stored now, with its row; a blob file collected since staging is stored again under the lock.
      if ((await blobs.commit(tx.checkpoints, staged)) === "gone") {
        blobs.files.put(content, staged.hash);
        blobs.sync();
      }
      await tx.checkpoints.insertArtifact(row);
    });
    const record: ArtifactRecord = { id: row.id, name, hash: staged.hash, size: staged.size, at: row.createdAt };
    if (input.mediaType !== undefined) record.mediaType = input.mediaType;
    if (input.label !== undefined) record.label = input.label;
    const { at: _at, ...data } = record;
    await this.#journal.append(sessionId, { id: row.id, type: "artifact:added", actor: input.actor ?? "agent", data: { ...data } });
    return record;
  }

  async list(sessionId: string): Promise<ArtifactInfo[]> {
    const rows = await this.#backend.transaction("read", async (tx) => {
      if (!(await tx.getSession(sessionId))) throw new BatonError("not_found", `no session "${sessionId}"`, { sessionId });
      return tx.checkpoints.listArtifacts(sessionId);
    });
    const present = await this.#cps.blobs.present(rows.map((r) => r.hash));
    return rows.map((r) => ({ ...toRecord(r), present: present.has(r.hash) }));
  }

  /** The newest artifact with this id or name, and its verified content. */
  async get(sessionId: string, idOrName: string): Promise<{ artifact: ArtifactInfo; content: Buffer }> {
    const all = await this.list(sessionId);
    const a = all.find((x) => x.id === idOrName) ?? all.filter((x) => x.name === idOrName).at(-1);
    if (!a) {
      throw new BatonError(
        "not_found",
        `session ${sessionId} has no artifact "${idOrName}"${all.length ? ` (artifacts: ${all.map((x) => x.name).join(", ")})` : ""}`,
        { sessionId, artifact: idOrName },
      );
    }
    return { artifact: a, content: await this.#cps.blobs.read(a.hash) };
  }

  /** Let a completed session's artifacts go: delete their blobs unless something else references them. */
  async release(sessionId: string): Promise<number> {
    const rows = await this.#backend.transaction("read", (tx) => tx.checkpoints.listArtifacts(sessionId));
    return rows.length === 0 ? 0 : this.#cps.release(rows.map((r) => r.hash));
  }
}

function toRecord(r: ArtifactRow): ArtifactRecord {
  const a: ArtifactRecord = { id: r.id, name: r.name, hash: r.hash, size: r.size, at: r.createdAt };
  if (r.mediaType !== null) a.mediaType = r.mediaType;
  if (r.label !== null) a.label = r.label;
  return a;
}
