import Tooltip from '@jetbrains/ring-ui-built/components/tooltip/tooltip';
import type { DisplayStatus } from '../data/status';
import type { HeartbeatColour } from '../data/heartbeat';

export function StatusBadge({ status }: { status: DisplayStatus }) {
  return <span className={`status status-${status}`}>{status}</span>;
}

const HEARTBEAT_TEXT: Record<HeartbeatColour, string> = {
  green: 'output is fresh',
  yellow: 'no output for a while',
  red: 'no output for a long time',
};

export function HeartbeatBadge({ colour, age }: { colour: HeartbeatColour; age: string }) {
  const label = `heartbeat: ${HEARTBEAT_TEXT[colour]} (last output ${age} ago)`;
  return (
    <Tooltip title={label} className="heartbeat-tip">
      <span className={`heartbeat heartbeat-${colour}`} aria-label={label} role="img" data-heartbeat={colour} />
    </Tooltip>
  );
}
