import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RunsLayout } from "@app/storage";
import { listenApiApp } from "../../utils/api-app";
import { agentEnv, busMessages, runInfos, waitFor } from "../runner/helpers";

const PROJECT = "ni-api";
const TASK = "task-20260101-000000-needs-input-api";

describe("needs-input over the API: answer route, open questions, metric, resume on task messages (#17)", () => {
  let api: Awaited<ReturnType<typeof listenApiApp>>;
  let layout: RunsLayout;
  beforeAll(async () => {
    api = await listenApiApp();
    layout = new RunsLayout(api.root);
  });
  afterAll(async () => {
    await fetch(`${api.base}/api/v1/tasks/${TASK}?project_id=${PROJECT}`, {
      method: "DELETE",
    }).catch(() => undefined);
    await api.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.base}${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      json: text.startsWith("{") ? JSON.parse(text) : undefined,
      text,
    };
  };
  const detail = async () =>
    (await call("GET", `/api/projects/${PROJECT}/tasks/${TASK}`)).json;
  const prompt = (runId: string) =>
    readFileSync(
      join(layout.runDir(PROJECT, TASK, runId), "prompt.md"),
      "utf8",
    );

  it("a question parks the task; the answer route resumes it; resume: true wakes the finished task", async () => {
    const created = await call("POST", "/api/v1/tasks", {
      project_id: PROJECT,
      task_id: TASK,
      agent_type: "fake",
      prompt: "write the report",
      config: agentEnv({
        FAKE_AGENT_POST_BUS: "Which quarter?",
        FAKE_AGENT_POST_BUS_TYPE: "QUESTION",
        FAKE_AGENT_POST_BUS_ATTEMPTS: "1",
        FAKE_AGENT_DONE_ON_ATTEMPT: "2",
      }),
    });
    expect(created.status).toBe(201);

    const parked = await waitFor("the task to park in needs_input", async () => {
      const d = await detail();
      return d.status === "needs_input" && d;
    });
    expect(parked).toMatchObject({
      status: "needs_input",
      state: "needs_input",
      done: false,
    });
    expect(parked.open_questions).toHaveLength(1);
    const question = parked.open_questions[0];
    expect(question).toMatchObject({
      type: "QUESTION",
      project_id: PROJECT,
      task_id: TASK,
      body: "Which quarter?",
    });
    const listed = await call(
      "GET",
      `/api/projects/${PROJECT}/tasks?status=needs_input`,
    );
    expect(listed.json.items.map((t: { id: string }) => t.id)).toEqual([TASK]);
    expect(listed.json.items[0].open_questions).toBe(1);
    expect((await call("GET", "/api/v1/questions")).json.questions).toEqual([
      question,
    ]);
    expect((await call("GET", "/metrics")).text).toMatch(
      /^conductor_tasks_needs_input 1$/m,
    );

    const before = busMessages(layout.taskBus(PROJECT, TASK)).length;
    expect(
      await call("POST", `/api/projects/${PROJECT}/tasks/${TASK}/answer`, {
        body: "",
      }),
    ).toMatchObject({ status: 400 });
    expect(
      await call("POST", `/api/projects/${PROJECT}/tasks/${TASK}/answer`, {
        body: "Q3",
        extra: 1,
      }),
    ).toMatchObject({ status: 400 });
    expect(
      await call("POST", `/api/projects/${PROJECT}/tasks/${TASK}/answer`, {
        body: "Q3",
        question_id: "MSG-nope",
      }),
    ).toMatchObject({ status: 404 });
    expect(
      await call("POST", `/api/projects/${PROJECT}/tasks/..%2Fx/answer`, {
        body: "Q3",
      }),
    ).toMatchObject({ status: 400 });
    expect(busMessages(layout.taskBus(PROJECT, TASK))).toHaveLength(before);

    const answered = await call(
      "POST",
      `/api/projects/${PROJECT}/tasks/${TASK}/answer`,
      { body: "Q3 2026" },
    );
    expect(answered.status).toBe(201);
    expect(answered.json).toMatchObject({
      msg_id: expect.stringMatching(/^MSG-/),
      answers: [question.msg_id],
    });

    const done = await waitFor("the answered task to finish", async () => {
      const d = await detail();
      return d.done === true && d;
    });
    expect(done.runs).toHaveLength(2);
    expect(prompt(done.runs[1].id)).toContain("Which quarter?");
    expect(prompt(done.runs[1].id)).toContain("Q3 2026");
    expect((await call("GET", "/api/v1/questions")).json.questions).toEqual([]);
    expect((await call("GET", "/metrics")).text).toMatch(
      /^conductor_tasks_needs_input 0$/m,
    );
    expect(
      await call("POST", `/api/projects/${PROJECT}/tasks/${TASK}/answer`, {
        body: "again",
      }),
    ).toMatchObject({ status: 404 });

    // the project bus has no task to wake
    expect(
      await call("POST", `/api/projects/${PROJECT}/messages`, {
        type: "USER",
        body: "x",
        resume: true,
      }),
    ).toMatchObject({ status: 400 });
    await waitFor(() =>
      runInfos(layout.taskDir(PROJECT, TASK)).every(
        (i) => i.status !== "running",
      ),
    );
    const woke = await call(
      "POST",
      `/api/projects/${PROJECT}/tasks/${TASK}/messages`,
      {
        type: "USER",
        body: "CI failed on main: fix the flaky test",
        resume: true,
      },
    );
    expect(woke.status).toBe(201);
    expect(woke.json).toMatchObject({
      msg_id: expect.stringMatching(/^MSG-/),
      resumed: true,
      reopened: true,
    });
    expect(["started", "running"]).toContain(woke.json.loop);
    const third = await waitFor(() => {
      const infos = runInfos(layout.taskDir(PROJECT, TASK));
      return infos.length >= 3 && infos[2].status !== "unknown"
        ? infos[2]
        : undefined;
    }, 20_000);
    expect(prompt(third.run_id)).toContain(
      "CI failed on main: fix the flaky test",
    );
    expect(
      busMessages(layout.taskBus(PROJECT, TASK)).find(
        (m) => m.msg_id === woke.json.msg_id,
      )?.meta,
    ).toEqual({ resume: "true" });
  }, 90_000);
});
