import { test } from "node:test";
import assert from "node:assert/strict";
import { EXITED, FAILED_TO_START, NOT_FOUND, browserLabels, hostProblem, installCommand, problemText } from "../../extension/shared/host-problem.js";
import { indicatorOf, stateText } from "../../extension/ui/popup-page.js";

test("the browser's brands name its install label; brands that say only Chromium list every label that fits", () => {
  const brand = (...names) => names.map((brand) => ({ brand, version: "156" }));
  assert.deepEqual(browserLabels(brand("Not:A-Brand", "Chromium")), ["chromium", "vivaldi"]);
  assert.deepEqual(browserLabels(brand("Chromium", "Google Chrome", "Not.A/Brand")), ["chrome"]);
  assert.deepEqual(browserLabels(brand("Chromium", "Microsoft Edge")), ["edge"]);
  assert.deepEqual(browserLabels(brand("Brave", "Chromium")), ["brave"]);
  assert.deepEqual(browserLabels(undefined), ["chromium", "vivaldi"], "no brands: not claimed to be known");
  assert.equal(installCommand(["chrome"]), "`tabwarden install --browser chrome`");
  assert.equal(installCommand(["chromium", "vivaldi"]),
    "`tabwarden install --browser chromium` (if this is not chromium: `tabwarden install --browser vivaldi`)");
});

test("what Chrome said when the port closed becomes the cause and the one command that fixes it", () => {
  const missing = hostProblem({ reason: NOT_FOUND, welcomed: false }, ["chrome"]);
  assert.equal(missing?.code, "host_not_installed");
  assert.match(missing?.next ?? "", /`tabwarden install --browser chrome`/);
  const failed = hostProblem({ reason: FAILED_TO_START, welcomed: false }, ["chromium"]);
  assert.equal(failed?.code, "host_cannot_start");
  const exitedEarly = hostProblem({ reason: EXITED, welcomed: false }, ["chromium"]);
  assert.equal(exitedEarly?.code, "host_cannot_start");
  assert.match(exitedEarly?.cause ?? "", /Python/);
  // A host that ran and went away is a reconnect, not a registration problem.
  assert.equal(hostProblem({ reason: EXITED, welcomed: true }, ["chromium"]), null);
  assert.equal(hostProblem({ reason: "port_closed", welcomed: true }, ["chromium"]), null);
  assert.equal(hostProblem({ reason: null, welcomed: null }, ["chromium"]), null);
});

test("the popup says the host is not installed and names the command, instead of reconnecting forever", () => {
  const hostProblemSeen = hostProblem({ reason: NOT_FOUND, welcomed: false }, ["chromium", "vivaldi"]);
  const s = { ok: true, phase: "reconnect_wait", gate: "none", killed: null, reconnectInMs: 2000,
    lastDisconnectReason: NOT_FOUND, hostProblem: hostProblemSeen };
  assert.deepEqual(indicatorOf(s), { state: "missing", word: "Host not installed for this browser" });
  // Sentences a person reads, the command in them, the code last; nothing about reconnecting.
  assert.equal(stateText(s), problemText(hostProblemSeen));
  assert.match(stateText(s), /^The tabwarden host is not registered for this browser .*\. Run `tabwarden install --browser chromium` .*\. \[host_not_installed\]$/);
  assert.doesNotMatch(stateText(s), /reconnect|next try|Specified native messaging host/i);
  assert.equal(indicatorOf({ ...s, hostProblem: null }).state, "reconnecting");
  assert.equal(problemText(null), "");
});
