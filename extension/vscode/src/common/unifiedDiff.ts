// Applies the unified diff of an approval request to the current text, so the
// approval's "Show diff" can open VS Code's side-by-side diff editor. Only the
// first file of the patch is used (approvals are per target path). Returns
// undefined when the patch does not apply (the caller then shows the patch).

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Splits text into lines that keep their terminators ("a\n", "b"). */
function splitKeep(text: string): string[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g);
  return lines ?? [];
}

export function applyUnifiedDiff(before: string, diff: string): string | undefined {
  const source = splitKeep(before);
  const out: string[] = [];
  let cursor = 0; // index into source
  let seenHunk = false;
  let lastAdded: "old" | "new" | "both" | undefined;
  const patch = diff.split("\n");
  if (patch.length > 0 && patch[patch.length - 1] === "") {
    patch.pop();
  }
  for (let i = 0; i < patch.length; i++) {
    const line = patch[i];
    const hunk = HUNK.exec(line);
    if (hunk) {
      seenHunk = true;
      const oldStart = Number(hunk[1]);
      const oldCount = hunk[2] === undefined ? 1 : Number(hunk[2]);
      // "-0,0" means insertion before the first line.
      const start = oldCount === 0 ? oldStart : oldStart - 1;
      if (start < cursor || start > source.length) {
        return undefined;
      }
      out.push(...source.slice(cursor, start));
      cursor = start;
      continue;
    }
    if (!seenHunk) {
      continue; // headers: diff, index, ---, +++
    }
    if (line.startsWith("--- ") && i + 1 < patch.length && patch[i + 1].startsWith("+++ ")) {
      break; // the next file of a multi-file patch
    }
    const tag = line[0];
    const body = line.slice(1);
    if (tag === " " || tag === "-") {
      const current = source[cursor];
      if (current === undefined || current.replace(/\r?\n$/, "") !== body.replace(/\r$/, "")) {
        return undefined;
      }
      if (tag === " ") {
        out.push(current);
      }
      cursor++;
      lastAdded = tag === " " ? "both" : "old";
    } else if (tag === "+") {
      out.push(body + "\n");
      lastAdded = "new";
    } else if (tag === "\\") {
      // "\ No newline at end of file" refers to the line just before it.
      if ((lastAdded === "new" || lastAdded === "both") && out.length > 0) {
        out[out.length - 1] = out[out.length - 1].replace(/\n$/, "");
      }
    } else if (line === "") {
      // Some generators drop the space of an empty context line.
      const current = source[cursor];
      if (current === undefined || current.replace(/\r?\n$/, "") !== "") {
        return undefined;
      }
      out.push(current);
      cursor++;
      lastAdded = "both";
    } else {
      return undefined;
    }
  }
  if (!seenHunk) {
    return undefined;
  }
  out.push(...source.slice(cursor));
  return out.join("");
}
