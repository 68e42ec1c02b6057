// Markdown pieces shared by the confirmation texts and the result documents.

/** A fenced block that no backtick run inside `text` can close early. */
export function fenced(text: string, language: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text.replace(/\n$/, "")}\n${fence}`;
}
