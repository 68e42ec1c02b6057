// Markdown pieces shared by the confirmation texts and the result documents.

/** A fenced block that no backtick run inside `text` can close early. */
export function fenced(text: string, language: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text.replace(/\n$/, "")}\n${fence}`;
}

/**
 * VS Code's plain dialogs (a modal's detail, an LM tool's confirmation outside the chat view)
 * collapse runs of whitespace, which loses a diff's or a command's indentation. No-break
 * spaces survive that and look the same in a rendered code block.
 */
export function keepWhitespace(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/\t/g, "    ").replace(/ {2,}|^ /g, (run) => "\u00a0".repeat(run.length)))
    .join("\n");
}
