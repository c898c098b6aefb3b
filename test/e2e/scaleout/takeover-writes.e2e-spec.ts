import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseBus, type BusMessage } from "@app/messagebus";
import { WRITE_ID_META } from "@app/scaleout";
import { readRunInfo } from "@app/storage";
import { natsServerAvailable } from "../../utils/nats-server";
import { clusterForFile, replicaDiff, waitFor } from "./cluster";

// Real nats-server, `conductor --nats` and two `run-agent worker` processes (lease 3 s): a write
// routed to a worker that is SIGKILLed before it applies it reaches the worker that takes the
// task over, and is applied there once.
const describeNats = natsServerAvailable() ? describe : describe.skip;

function messages(root: string, p: string, t: string): BusMessage[] {
  const f = join(root, p, t, "TASK-MESSAGE-BUS.md");
  return existsSync(f) ? parseBus(readFileSync(f)) : [];
}

describeNats("a write to a task whose worker died (real nats-server)", () => {
  const c = clusterForFile(2);

  it("is re-sent to the worker that takes the task over and appended once there and on the replica", async () => {
    const p = "takeover";
    const t = "task-20260101-000000-tkov1";
    const { run_id: runId } = await c.submit(p, t, {
      FAKE_AGENT_SLEEP_MS: "4000",
    });
    const infoFile = join(c.server.root, p, t, "runs", runId, "run-info.yaml");
    await waitFor(
      "the run replicated as running",
      () => existsSync(infoFile) && readRunInfo(infoFile).status === "running",
      60_000,
    );
    const owner = c.workers.find((w) =>
      existsSync(join(w.root, p, t, "TASK.md")),
    )!;
    const heir = c.workers.find((w) => w !== owner)!;
    await new Promise<void>((resolve) => {
      owner.child.once("exit", () => resolve());
      owner.child.kill("SIGKILL");
    });

    // the server still routes to the dead owner: the write waits in CONDUCTOR_CONTROL for it
    const body = "posted while the owner was dead";
    const res = await fetch(`${c.serverUrl}/api/v1/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ project_id: p, task_id: t, type: "USER", body }),
    });
    const answer = (await res.json()) as {
      msg_id?: string;
      error?: { message: string };
    };
    // The takeover (one lease, 3 s) normally comes before the server's 15 s confirmation timeout and
    // the heir's confirmation answers the request (201). On a loaded machine the request can time
    // out first (409, "stays queued"). Either way the heir applies the write exactly once.
    if (res.status === 201) expect(answer.error).toBeUndefined();
    else
      expect([res.status, answer.error?.message]).toEqual([
        409,
        expect.stringMatching(
          /did not confirm the post .* a worker that takes the task over applies it once/,
        ),
      ]);
    const onHeir = await waitFor(
      "the heir to append the write",
      () => {
        const found = messages(heir.root, p, t).filter((m) => m.body === body);
        return found.length ? found : undefined;
      },
      60_000,
    );
    expect(onHeir).toHaveLength(1);
    if (res.status === 201) expect(onHeir[0].msg_id).toBe(answer.msg_id);
    expect(onHeir[0].meta?.[WRITE_ID_META]).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(messages(owner.root, p, t).filter((m) => m.body === body)).toEqual(
      [],
    );

    await waitFor(
      "DONE on the replica",
      () => existsSync(join(c.server.root, p, t, "DONE")),
      60_000,
    );
    await waitFor(
      "the replica to match the heir",
      () => replicaDiff(heir.root, c.server.root, p).length === 0,
      20_000,
    ).catch(() => undefined);
    expect(replicaDiff(heir.root, c.server.root, p)).toEqual([]);
    expect(
      messages(c.server.root, p, t).filter((m) => m.body === body),
    ).toHaveLength(1);
    expect(
      readdirSync(join(c.server.root, p, t, "runs")).length,
    ).toBeGreaterThanOrEqual(2);
  });
});
