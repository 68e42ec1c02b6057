// Review and trust of a workspace .toolhost.toml. The server applies the settings of such
// a file that loosen policy only once the user approved its exact content (its sha256):
// it says so with toolhost/configUntrusted, and toolhost/trustConfig records the approval
// of the content the user was shown. Anything an agent can write stays ignored until then.

import { createHash } from "node:crypto";
import * as path from "node:path";

import type { ConfigUntrustedParams, TrustConfigParams, TrustConfigResult } from "./protocol";

export const REVIEW = "Review";
export const TRUST = "Trust this content";

/** What the editor needs to show and read (VS Code's UI in the extension, a script in tests). */
export interface TrustUi {
  /** A non-modal notification with buttons; the clicked one or undefined. */
  notify(message: string, ...actions: string[]): Promise<string | undefined>;
  /** Shows `text` read-only (never the file itself, which may change meanwhile). */
  showContent(title: string, text: string): Promise<void>;
  /** The file's bytes on disk now; undefined when it cannot be read. */
  readBytes(file: string): Promise<Uint8Array | undefined>;
  info(message: string): void;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function ignoredList(params: ConfigUntrustedParams): string {
  return params.ignored.length > 0 ? params.ignored.join(", ") : "settings that loosen policy";
}

export function untrustedNotice(params: ConfigUntrustedParams): string {
  const reason = params.reason ? ` (${params.reason})` : "";
  return `Toolhost ignored ${path.basename(params.path)}'s ${ignoredList(params)} until you review it${reason}: ${params.path}`;
}

/**
 * Offers to review and trust one file. With `fromNotice` the first notification offers both
 * buttons; "Review" shows exactly the content whose hash the server reported, then asks
 * again. The sha256 sent is the one shown: if the file changed meanwhile, nothing is sent
 * (the server tells about the new content itself).
 */
export async function reviewAndTrust(
  ui: TrustUi,
  params: ConfigUntrustedParams,
  send: (request: TrustConfigParams) => Promise<TrustConfigResult>,
  fromNotice = true,
): Promise<TrustConfigResult | undefined> {
  let choice = fromNotice ? await ui.notify(untrustedNotice(params), REVIEW, TRUST) : REVIEW;
  if (choice === REVIEW) {
    const bytes = await ui.readBytes(params.path);
    if (bytes === undefined || sha256Hex(bytes) !== params.sha256) {
      ui.info(`Toolhost: ${params.path} changed since toolhost read it; it stays ignored until you review the new content.`);
      return undefined;
    }
    await ui.showContent(`${path.basename(params.path)} (under review)`, new TextDecoder().decode(bytes));
    choice = await ui.notify(
      `Trust this content of ${params.path}? Its ${ignoredList(params)} then apply; any later change is ignored until you review it again.`,
      TRUST,
    );
  }
  if (choice !== TRUST) {
    return undefined;
  }
  const result = await send({ path: params.path, sha256: params.sha256 });
  ui.info(`Toolhost: ${result.message || (result.trusted ? `${params.path} is trusted` : `${params.path} was not trusted`)}`);
  return result;
}

/** The untrusted files of a toolhost/status result (its workspaceConfig list). */
export function untrustedFromStatus(status: unknown): ConfigUntrustedParams[] {
  const list = (status as { workspaceConfig?: unknown } | undefined)?.workspaceConfig;
  if (!Array.isArray(list)) {
    return [];
  }
  return list
    .filter((entry): entry is Record<string, unknown> => typeof entry === "object" && entry !== null)
    .filter((entry) => entry.state === "untrusted" && typeof entry.path === "string" && typeof entry.sha256 === "string")
    .map((entry) => ({
      path: entry.path as string,
      sha256: entry.sha256 as string,
      reason: typeof entry.reason === "string" ? entry.reason : "",
      ignored: Array.isArray(entry.ignored) ? entry.ignored.filter((item): item is string => typeof item === "string") : [],
    }));
}
