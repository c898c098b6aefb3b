/**
 * "The planner owns what it started" (issue #11): a server with max_concurrent_root_tasks: 1 is
 * SIGKILLed with one root task running and four queued; after a restart every task reaches DONE
 * exactly once, in FIFO order. Agent starts and DONEs are counted by a real fake agent appending
 * to a counter file. Needs `npx nest build api && npx nest build cli`.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readMessages } from "@app/messagebus";
import { writeRunInfo, ZERO_TIME } from "@app/storage";
import {
  postJson,
  RunningServer,
  startConductor,
  waitFor,
  writeConfig,
} from "./helpers";

const COUNTING_AGENT = `#!/bin/sh
cat > /dev/null
echo "start $JRUN_TASK_ID" >> "$COUNTER_FILE"
while [ ! -f "$GO_FILE" ]; do sleep 0.05; done
echo "done $JRUN_TASK_ID" >> "$COUNTER_FILE"
touch "$JRUN_TASK_FOLDER/DONE"
`;

const TASKS = ["1", "2", "3", "4", "5"];

describe("planner after a server SIGKILL (issue #11)", () => {
  let server: RunningServer | undefined;
  const dirs: string[] = [];
  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop("SIGKILL");
    for (const d of dirs) {
      writeFileSync(join(d, "go"), "");
      rmSync(d, { recursive: true, force: true });
    }
  });

  function setup() {
    const dir = mkdtempSync(join(tmpdir(), "planner-crash-"));
    dirs.push(dir);
    const agent = join(dir, "counting-agent.sh");
    writeFileSync(agent, COUNTING_AGENT);
    chmodSync(agent, 0o755);
    const config = writeConfig(dir, agent, "  max_concurrent_root_tasks: 1\n");
    const root = join(dir, "runs");
    const start = () => startConductor(dir, root, config);
    const counter = join(dir, "counter");
    const lines = () =>
      existsSync(counter)
        ? readFileSync(counter, "utf8").trim().split("\n")
        : [];
    const taskId = (t: string) => `task-20260101-000000-crash${t}`;
    const create = (t: string) =>
      postJson(`${server!.url}/api/v1/tasks`, {
        project_id: "proj",
        task_id: taskId(t),
        agent_type: "fake",
        prompt: `task ${t}`,
        config: { COUNTER_FILE: counter, GO_FILE: join(dir, "go") },
      });
    const taskBus = (t: string) =>
      join(root, "proj", taskId(t), "TASK-MESSAGE-BUS.md");
    return { dir, root, start, lines, taskId, create, taskBus };
  }

  async function crashWithQueue(s: ReturnType<typeof setup>): Promise<number> {
    server = await s.start();
    for (const t of TASKS) expect((await s.create(t)).status).toBe(201);
    await waitFor("task 1 agent to start", () => s.lines().length === 1);
    const runsDir = join(s.root, "proj", s.taskId("1"), "runs");
    const agentPid = await waitFor("the agent pid of task 1", () => {
      for (const r of existsSync(runsDir) ? readdirSync(runsDir) : []) {
        const info = join(runsDir, r, "run-info.yaml");
        const pid = existsSync(info)
          ? Number(/^pid: (\d+)$/m.exec(readFileSync(info, "utf8"))?.[1])
          : 0;
        if (pid > 0 && pid !== server!.child.pid) return pid;
      }
      return undefined;
    });
    expect(await server.stop("SIGKILL")).toBeNull();
    return agentPid;
  }

  it("a live agent of the crashed server is adopted: every task starts once and reaches DONE once, FIFO", async () => {
    const s = setup();
    await crashWithQueue(s);
    server = await s.start();
    writeFileSync(join(s.dir, "go"), "");
    await waitFor(
      "all five tasks to be DONE",
      () => s.lines().filter((l) => l.startsWith("done ")).length === 5,
      60_000,
    );
    expect(s.lines()).toEqual(
      TASKS.flatMap((t) => [`start ${s.taskId(t)}`, `done ${s.taskId(t)}`]),
    );
    const bodies = readMessages(s.taskBus("1")).map((m) => m.body);
    expect(
      bodies.some((b) =>
        b.startsWith("server restarted: the task loop of run"),
      ),
    ).toBe(true);
    expect(bodies.some((b) => b.startsWith("adopting run"))).toBe(true);
    await waitFor(
      "the planner queue to drain",
      () =>
        !/task_id/.test(
          readFileSync(
            join(s.root, ".conductor", "root-task-planner.yaml"),
            "utf8",
          ),
        ),
    );
    expect(await server.stop("SIGTERM")).toBe(0);
  });

  it("an agent that died with the server is restarted: every task reaches DONE exactly once, FIFO", async () => {
    const s = setup();
    const agentPid = await crashWithQueue(s);
    process.kill(-agentPid, "SIGKILL");
    server = await s.start();
    await waitFor("task 1 to start again", () => s.lines().length === 2);
    writeFileSync(join(s.dir, "go"), "");
    await waitFor(
      "all five tasks to be DONE",
      () => s.lines().filter((l) => l.startsWith("done ")).length === 5,
      60_000,
    );
    expect(s.lines()).toEqual([
      `start ${s.taskId("1")}`,
      ...TASKS.flatMap((t) => [`start ${s.taskId(t)}`, `done ${s.taskId(t)}`]),
    ]);
    expect(
      readMessages(s.taskBus("1")).some((m) =>
        m.body.startsWith("server restarted: the task loop of run"),
      ),
    ).toBe(true);
    expect(await server.stop("SIGTERM")).toBe(0);
  });
});

describe("POST /api/v1/tasks next to a live agent whose loop is gone (issue #11)", () => {
  it("answers 409 naming the pid and changes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orphan-409-"));
    const orphan = spawn("sleep", ["120"], { detached: true, stdio: "ignore" });
    let server: RunningServer | undefined;
    try {
      const root = join(dir, "runs");
      const task = "task-20260101-000000-orphan";
      const runDir = join(
        root,
        "proj",
        task,
        "runs",
        "20260101-0000000000-1-1",
      );
      mkdirSync(runDir, { recursive: true });
      // the run-info an agent record has while its runner lives: pid = pgid = the agent
      writeRunInfo(join(runDir, "run-info.yaml"), {
        version: 1,
        run_id: "20260101-0000000000-1-1",
        project_id: "proj",
        task_id: task,
        agent: "command",
        pid: orphan.pid!,
        pgid: orphan.pid!,
        start_time: new Date(),
        end_time: ZERO_TIME,
        exit_code: -1,
        status: "running",
        agent_version: "",
      });
      const config = writeConfig(dir, "/bin/true");
      server = await startConductor(dir, root, config);
      const res = await postJson(`${server.url}/api/v1/tasks`, {
        project_id: "proj",
        task_id: task,
        agent_type: "fake",
        prompt: "again",
      });
      expect(res.status).toBe(409);
      expect(JSON.stringify(res.body)).toContain(
        `run 20260101-0000000000-1-1, pid ${orphan.pid}`,
      );
      expect(readdirSync(join(root, "proj", task, "runs"))).toEqual([
        "20260101-0000000000-1-1",
      ]);
      expect(existsSync(join(root, "proj", task, "TASK.md"))).toBe(false);
    } finally {
      process.kill(-orphan.pid!, "SIGKILL");
      if (server) await server.stop("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
