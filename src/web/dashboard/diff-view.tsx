/**
 * A unified diff (one file's, as the server's rollback preview gives it) shown unified or side
 * by side. Parsed here rather than by a library: the text is already a diff, only its lines
 * need placing. A file the server did not diff (binary, too large) arrives as one line saying
 * so, shown as it is.
 */
export interface DiffLine {
  kind: "ctx" | "del" | "add" | "hunk";
  text: string;
  oldNo?: number;
  newNo?: number;
}

export function parseUnified(diff: string): { lines: DiffLine[]; note?: string } {
  const out: DiffLine[] = [];
  let o = 0;
  let n = 0;
  let inHunk = false;
  for (const line of diff.split("\n")) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h) {
      o = Number(h[1]);
      n = Number(h[2]);
      inHunk = true;
      out.push({ kind: "hunk", text: line });
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith("\\")) continue; // "\ No newline at end of file"
    if (line.startsWith("-")) out.push({ kind: "del", text: line.slice(1), oldNo: o++ });
    else if (line.startsWith("+")) out.push({ kind: "add", text: line.slice(1), newNo: n++ });
    else if (line.startsWith(" ")) out.push({ kind: "ctx", text: line.slice(1), oldNo: o++, newNo: n++ });
  }
  if (out.length === 0) {
    const note = diff
      .split("\n")
      .filter((l) => l && !l.startsWith("===") && !l.startsWith("Index:") && !l.startsWith("---") && !l.startsWith("+++"))
      .join(" ");
    return { lines: out, note: note || "no textual difference" };
  }
  return { lines: out };
}

/** Side by side: each run of deletions is paired row by row with the additions that follow it. */
export function sideBySide(lines: DiffLine[]): { left?: DiffLine; right?: DiffLine; hunk?: string }[] {
  const rows: { left?: DiffLine; right?: DiffLine; hunk?: string }[] = [];
  for (let i = 0; i < lines.length; ) {
    const l = lines[i] as DiffLine;
    if (l.kind === "hunk") {
      rows.push({ hunk: l.text });
      i++;
    } else if (l.kind === "ctx") {
      rows.push({ left: l, right: l });
      i++;
    } else {
      const dels: DiffLine[] = [];
      const adds: DiffLine[] = [];
      while (i < lines.length && (lines[i] as DiffLine).kind === "del") dels.push(lines[i++] as DiffLine);
      while (i < lines.length && (lines[i] as DiffLine).kind === "add") adds.push(lines[i++] as DiffLine);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const row: { left?: DiffLine; right?: DiffLine } = {};
        if (dels[k]) row.left = dels[k];
        if (adds[k]) row.right = adds[k];
        rows.push(row);
      }
    }
  }
  return rows;
}

const SIGN = { ctx: " ", del: "-", add: "+", hunk: "" } as const;

export function DiffView({ diff, mode, label }: { diff: string; mode: "unified" | "split"; label: string }) {
  const { lines, note } = parseUnified(diff);
  if (note !== undefined) return <p class="muted diff-note">{note}</p>;
  // In a box of its own that scrolls sideways: on a phone, side by side is wider than the screen.
  if (mode === "unified") {
    return (
      <div class="diff-box">
        <table class="diff" aria-label={`${label}, unified diff`}>
          <colgroup>
            <col class="no" />
            <col class="no" />
            <col />
          </colgroup>
          <tbody>
            {lines.map((l, i) =>
              l.kind === "hunk" ? (
                <tr key={i} class="hunk">
                  <td colSpan={3}>{l.text}</td>
                </tr>
              ) : (
                <tr key={i} class={l.kind}>
                  <td class="no">{l.oldNo ?? ""}</td>
                  <td class="no">{l.newNo ?? ""}</td>
                  <td class="code">
                    {SIGN[l.kind]}
                    {l.text}
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
    );
  }
  return (
    <div class="diff-box">
      <table class="diff split" aria-label={`${label}, side by side diff`}>
        <colgroup>
          <col class="no" />
          <col />
          <col class="no" />
          <col />
        </colgroup>
        <tbody>
          {sideBySide(lines).map((r, i) =>
            r.hunk !== undefined ? (
              <tr key={i} class="hunk">
                <td colSpan={4}>{r.hunk}</td>
              </tr>
            ) : (
              <tr key={i}>
                <td class="no">{r.left?.oldNo ?? ""}</td>
                <td class={`code ${r.left ? r.left.kind : "empty"}`}>{r.left?.text ?? ""}</td>
                <td class="no">{r.right?.newNo ?? ""}</td>
                <td class={`code ${r.right ? r.right.kind : "empty"}`}>{r.right?.text ?? ""}</td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}
