import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readRunInfo } from "@app/storage";
import { natsServerAvailable } from "../../utils/nats-server";
import { processAlive } from "../../utils/processes";
import { clusterForFile, waitFor } from "./cluster";

// Real nats-server, `conductor --nats` and two `run-agent worker` processes (lease 3 s).
const describeNats = natsServerAvailable() ? describe : describe.skip;

/** The pid of the watchdog shell that ends agent group `pgid` when its runner dies (argv: sh -c SCRIPT run-agent-watchdog PGID GRACE). */
function watchdogOf(pgid: number): number | undefined {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("run-agent-watchdog");
      if (at > 0 && argv[at + 1] === String(pgid)) return Number(pid);
    } catch {
      // the process ended while listing
    }
  }
  return undefined;
}

describeNats(
  "a worker restarted on the same runs root (real nats-server)",
  () => {
    const c = clusterForFile(2);

    it("stops the agents its killed predecessor left running and finalises their runs, publishing nothing", async () => {
      const p = "orphans";
      const t = "task-20260101-000000-orph1";
      const { run_id: runId } = await c.submit(p, t, {
        FAKE_AGENT_SLEEP_MS: "60000",
      });
      const replicaInfo = join(
        c.server.root,
        p,
        t,
        "runs",
        runId,
        "run-info.yaml",
      );
      // `starting: true` names the runner (the worker) until the agent is spawned: wait for the agent's record
      await waitFor(
        "the agent running, replicated",
        () => {
          const info = existsSync(replicaInfo) && readRunInfo(replicaInfo);
          return (
            info && info.status === "running" && !info.starting && info.pgid > 0
          );
        },
        60_000,
      );
      const owner = c.workers.find((w) =>
        existsSync(join(w.root, p, t, "TASK.md")),
      )!;
      const localInfo = join(owner.root, p, t, "runs", runId, "run-info.yaml");
      const agentPid = readRunInfo(localInfo).pid;
      // An agent's watchdog ends its group when the runner dies (agent-watchdog.ts). The orphan case is
      // an agent that outlived both (e.g. the watchdog was killed too): make that happen, then kill the worker.
      const watchdog = watchdogOf(agentPid);
      expect(watchdog).toBeDefined();
      process.kill(watchdog!, "SIGKILL");
      await new Promise<void>((resolve) => {
        owner.child.once("exit", () => resolve());
        owner.child.kill("SIGKILL");
      });
      expect(processAlive(agentPid)).toBe(true);

      const again = c.startWorker(owner.host);
      await waitFor(
        "the restarted worker to release the task",
        () => again.out.includes(`stopped the orphaned runs of ${p}/${t}`),
        30_000,
      );
      await waitFor(
        "the orphaned agent to end",
        () => !processAlive(agentPid),
        15_000,
      );
      const local = readRunInfo(localInfo);
      expect(local.status).not.toBe("running");
      expect(
        existsSync(join(owner.root, p, t, "runs", runId, "STOPPED-BY")),
      ).toBe(true);
      // the task went on from the queue (another run), and the stale copy's finalisation was not published:
      // the replica's first run is finalised by the worker that took the task over (worker host lost)
      await waitFor(
        "the first run failed on the replica by the takeover",
        () =>
          /worker host lost/.test(
            readRunInfo(replicaInfo).error_summary ?? "",
          ) && readRunInfo(replicaInfo),
        // the task comes back after the 3 s lease (the queue's ack wait, set by the workers) and the takeover replays it
        30_000,
      );
      expect(readRunInfo(replicaInfo).error_summary).not.toMatch(/restarted/);

      const cancel = await fetch(
        `${c.serverUrl}/api/v1/tasks/${t}?project_id=${p}`,
        { method: "DELETE" },
      );
      expect(cancel.status).toBe(202);
      // no agent left behind by the test
      const runsDir = join(c.server.root, p, t, "runs");
      await waitFor(
        "every run of the task ended",
        () =>
          readdirSync(runsDir).every(
            (r) =>
              !existsSync(join(runsDir, r, "run-info.yaml")) ||
              readRunInfo(join(runsDir, r, "run-info.yaml")).status !==
                "running",
          ),
        30_000,
      );
    });
  },
);
