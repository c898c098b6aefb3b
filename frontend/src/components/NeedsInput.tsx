import { useState } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import Input from '@jetbrains/ring-ui-built/components/input/input';
import { api, describeError } from '../api/client';
import type { OpenQuestion } from '../api/types';

/** A textarea + Answer button posting an ANSWER to the task's open question (#17). */
export function AnswerBox({ question, onAnswered, notify }: { question: OpenQuestion; onAnswered: () => void; notify: (text: string, error?: boolean) => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const task = question.task_id ?? '';
  const submit = async () => {
    if (!text.trim() || !task) return;
    setBusy(true);
    try {
      await api.answer(question.project_id, task, text, question.msg_id);
      setText('');
      notify(`Answered ${question.msg_id}; ${task} resumes`);
      onAnswered();
    } catch (err) {
      notify(describeError(err), true);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="answer-box"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <Input multiline className="answer-input" aria-label={`Answer to ${question.msg_id}`} value={text} onChange={(e) => setText(e.target.value)} rows={2} placeholder="Your answer" />
      <Button type="submit" primary disabled={busy || !text.trim()}>
        Answer
      </Button>
    </form>
  );
}

function QuestionItem(props: { question: OpenQuestion; onAnswered: () => void; notify: (text: string, error?: boolean) => void; onSelect?: (project: string, task: string) => void }) {
  const q = props.question;
  return (
    <li className="open-question" data-msg-id={q.msg_id}>
      <div className="open-question-head">
        <span className={`status status-needs_input`}>{q.type}</span>{' '}
        {props.onSelect && q.task_id ? (
          <Button inline onClick={() => props.onSelect!(q.project_id, q.task_id!)}>
            {q.project_id} / {q.task_id}
          </Button>
        ) : (
          <span className="muted">{q.timestamp}</span>
        )}
      </div>
      <pre className="open-question-body">{q.body}</pre>
      <AnswerBox question={q} onAnswered={props.onAnswered} notify={props.notify} />
    </li>
  );
}

/** Open questions across every project, each with an answer box. */
export function OpenQuestionsPanel(props: { questions: OpenQuestion[]; onAnswered: () => void; notify: (text: string, error?: boolean) => void; onSelect: (project: string, task: string) => void }) {
  if (props.questions.length === 0) return null;
  return (
    <Island className="panel open-questions" aria-label="Open questions" role="region">
      <IslandHeader border className="panel-header">
        Open questions ({props.questions.length})
      </IslandHeader>
      <ul>
        {props.questions.map((q) => (
          <QuestionItem key={q.msg_id} question={q} onAnswered={props.onAnswered} notify={props.notify} onSelect={props.onSelect} />
        ))}
      </ul>
    </Island>
  );
}

/** Banner on the selected task: its open questions (with answer boxes) and the stalled flag. */
export function TaskInputBanner(props: { questions: OpenQuestion[]; stalled: boolean; onAnswered: () => void; notify: (text: string, error?: boolean) => void }) {
  if (props.questions.length === 0 && !props.stalled) return null;
  return (
    <div className="banner banner-input" role="alert">
      {props.questions.length > 0 && (
        <>
          <strong>This task needs input.</strong> The agent asked:
          <ul>
            {props.questions.map((q) => (
              <QuestionItem key={q.msg_id} question={q} onAnswered={props.onAnswered} notify={props.notify} />
            ))}
          </ul>
        </>
      )}
      {props.stalled && (
        <p className="stalled-note">
          <strong>Stalled:</strong> the current run has produced no output and no bus messages for a while.
        </p>
      )}
    </div>
  );
}
