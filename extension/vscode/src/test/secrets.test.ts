import assert from "node:assert/strict";
import { test } from "node:test";

import type { InputBoxRequest } from "../common/host";
import type { SecretParams } from "../common/protocol";
import { askSecret } from "../common/secrets";
import { ScriptedHost } from "./scriptedHost";

const CLONE: SecretParams = {
  prompt: "Password for http://127.0.0.1:8000/repo.git",
  kind: "credential",
  session: "default",
  callId: "c-1",
  command: "git clone http://127.0.0.1:8000/repo.git",
  username: null,
};

test("a credential asks the user name, then the password in a password box", async () => {
  const host = new ScriptedHost([], ["ada", "s3cret-pass"]);
  const result = await askSecret(host, CLONE);
  assert.deepEqual(result, { secret: "s3cret-pass", username: "ada" });
  const boxes: InputBoxRequest[] = host.inputBoxes;
  assert.equal(boxes.length, 2);
  assert.equal(boxes[0].password, undefined);
  assert.equal(boxes[1].password, true);
  assert.match(boxes[1].title ?? "", /git clone/);
});

test("escape at the password cancels", async () => {
  const host = new ScriptedHost([], [undefined]);
  const result = await askSecret(host, { ...CLONE, kind: "ssh", prompt: "Enter old passphrase:" });
  assert.deepEqual(result, { cancelled: true });
});
