// toolhost/secret: a command the user allowed asks for a password (ssh, sudo, git). The
// user types it into an input box with `password: true` (VS Code shows dots); the answer
// goes back to the server and on to the program only, never to the model, a log or the
// activity view. Escape or an empty answer cancels: the command then fails and the agent
// is told the user cancelled.

import type { Host } from "./host";
import type { SecretParams, SecretResult } from "./protocol";

export async function askSecret(host: Host, params: SecretParams): Promise<SecretResult> {
  const title = `toolhost: \`${params.command}\` asks`;
  let username: string | undefined;
  if (params.kind === "credential" && !params.username) {
    username = await host.showInputBox({ title, prompt: `${params.prompt}: user name` });
    if (!username) {
      return { cancelled: true };
    }
  }
  const secret = await host.showInputBox({ title, prompt: params.prompt, password: true });
  if (!secret) {
    return { cancelled: true };
  }
  return username ? { secret, username } : { secret };
}
