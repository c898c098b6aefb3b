import type { ProjectRun } from '../api/types';

type Criteria = NonNullable<ProjectRun['criteria']>;

/** The completion criteria checked when the run's agent wrote DONE (docs/completion-criteria.md). */
export function RunCriteria({ criteria }: { criteria: Criteria }) {
  return (
    <section className="run-criteria" aria-label="Completion criteria">
      <h4>
        Completion criteria: <span className={criteria.passed ? 'criteria-passed' : 'criteria-failed'}>{criteria.passed ? 'passed' : 'failed'}</span>
      </h4>
      {criteria.reason && <p className="criteria-reason">{criteria.reason}</p>}
      <ul>
        {criteria.results.map((r, i) => (
          <li key={i}>
            <code>{r.command}</code> — {r.passed ? 'passed' : r.timed_out ? 'timed out' : r.error ? r.error : `exit ${r.exit_code}`} ({r.duration_ms} ms)
            {r.output_tail && <pre className="criteria-output">{r.output_tail}</pre>}
          </li>
        ))}
      </ul>
    </section>
  );
}
