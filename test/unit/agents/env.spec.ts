import { delimiter } from 'node:path';
import { buildAgentEnv, JrunValues, prependPathDir, runAgentBinDir } from '@app/agents';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const jrun: JrunValues = {
  projectId: 'proj',
  taskId: 'task-20260101-000000-demo',
  runId: '20260101-0000000000-42-1',
  runsDir: '/runs/proj/task-20260101-000000-demo/runs',
  messageBus: '/runs/proj/task-20260101-000000-demo/TASK-MESSAGE-BUS.md',
  taskFolder: '/runs/proj/task-20260101-000000-demo',
  runFolder: '/runs/proj/task-20260101-000000-demo/runs/20260101-0000000000-42-1',
};

const allKeys = {
  OPENAI_API_KEY: 'openai',
  ANTHROPIC_API_KEY: 'anthropic',
  gemini_api_key: 'gemini-lower',
  PERPLEXITY_API_KEY: 'pplx',
  XAI_API_KEY: 'xai',
  OPENAI_ORG_ID: 'org',
};

describe('buildAgentEnv', () => {
  it('sets JRUN_* and the seed short names, with JRUN_PARENT_ID present even when empty', () => {
    const env = buildAgentEnv({ agentType: 'claude', base: { HOME: '/home/u' }, jrun });
    expect(env).toMatchObject({
      HOME: '/home/u',
      JRUN_PROJECT_ID: 'proj',
      JRUN_TASK_ID: jrun.taskId,
      JRUN_ID: jrun.runId,
      JRUN_PARENT_ID: '',
      JRUN_RUNS_DIR: jrun.runsDir,
      JRUN_MESSAGE_BUS: jrun.messageBus,
      JRUN_TASK_FOLDER: jrun.taskFolder,
      JRUN_RUN_FOLDER: jrun.runFolder,
      MESSAGE_BUS: jrun.messageBus,
      TASK_FOLDER: jrun.taskFolder,
      RUN_FOLDER: jrun.runFolder,
    });
    expect(env).not.toHaveProperty('JRUN_CONDUCTOR_URL');
    expect(env).not.toHaveProperty('CONDUCTOR_URL');
    const withUrl = buildAgentEnv({ agentType: 'claude', base: {}, jrun: { ...jrun, conductorUrl: 'http://127.0.0.1:14355', parentRunId: 'p-1' } });
    expect(withUrl).toMatchObject({ JRUN_CONDUCTOR_URL: 'http://127.0.0.1:14355', CONDUCTOR_URL: 'http://127.0.0.1:14355', JRUN_PARENT_ID: 'p-1' });
  });

  it('overrides inherited JRUN_* values and returns keys sorted', () => {
    const env = buildAgentEnv({ agentType: 'codex', base: { ZED: '1', JRUN_ID: 'stale', ALPHA: '2' }, jrun });
    expect(env.JRUN_ID).toBe(jrun.runId);
    const keys = Object.keys(env);
    expect(keys).toEqual([...keys].sort());
  });

  it.each([
    ['claude', 'ANTHROPIC_API_KEY', 'anthropic', []],
    ['codex', 'OPENAI_API_KEY', 'openai', ['OPENAI_ORG_ID']],
    ['gemini', 'gemini_api_key', 'gemini-lower', []],
    ['perplexity', 'PERPLEXITY_API_KEY', 'pplx', []],
    ['xai', 'XAI_API_KEY', 'xai', []],
  ])('%s keeps only its own key (%s)', (type, ownKey, ownValue, extraKept) => {
    const env = buildAgentEnv({ agentType: type, base: { ...allKeys, OTHER_SECRET: 'kept' }, jrun });
    const present = Object.keys(env).filter((k) => k in allKeys);
    expect(present.sort()).toEqual([ownKey, ...extraKept].sort());
    expect(env[ownKey]).toBe(ownValue);
    expect(env.OTHER_SECRET).toBe('kept');
  });

  it('gives a command agent none of the agent keys', () => {
    const env = buildAgentEnv({ agentType: 'command', base: { ...allKeys }, jrun });
    expect(Object.keys(env).filter((k) => k in allKeys)).toEqual([]);
  });

  it('exports a config token as the type variable, replacing the inherited value', () => {
    const env = buildAgentEnv({ agentType: 'claude', base: { ANTHROPIC_API_KEY: 'inherited' }, jrun, token: '  from-config ' });
    expect(env.ANTHROPIC_API_KEY).toBe('from-config');
    const inherited = buildAgentEnv({ agentType: 'claude', base: { ANTHROPIC_API_KEY: 'inherited' }, jrun, token: '  ' });
    expect(inherited.ANTHROPIC_API_KEY).toBe('inherited');
  });

  it('removes CLAUDECODE for every agent type', () => {
    for (const type of ['claude', 'codex', 'gemini', 'command']) {
      expect(buildAgentEnv({ agentType: type, base: { CLAUDECODE: '1' }, jrun })).not.toHaveProperty('CLAUDECODE');
    }
  });

  it('prepends the run-agent folder to PATH once', () => {
    const env = buildAgentEnv({ agentType: 'claude', base: { PATH: ['/usr/bin', '/bin'].join(delimiter) }, jrun, binDir: '/opt/ra/bin' });
    expect(env.PATH).toBe(['/opt/ra/bin', '/usr/bin', '/bin'].join(delimiter));
    const again = buildAgentEnv({ agentType: 'claude', base: { PATH: env.PATH }, jrun, binDir: '/opt/ra/bin' });
    expect(again.PATH).toBe(env.PATH);
    const alreadyLater = ['/usr/bin', '/opt/ra/bin'].join(delimiter);
    expect(buildAgentEnv({ agentType: 'claude', base: { PATH: alreadyLater }, jrun, binDir: '/opt/ra/bin' }).PATH).toBe(alreadyLater);
    expect(buildAgentEnv({ agentType: 'claude', base: {}, jrun, binDir: '/opt/ra/bin' }).PATH).toBe('/opt/ra/bin');
  });

  it('applies the caller environment last, but still strips foreign keys and CLAUDECODE afterwards', () => {
    const env = buildAgentEnv({
      agentType: 'claude',
      base: { PATH: '/bin' },
      jrun,
      binDir: '/opt/ra/bin',
      callerEnv: { JRUN_ID: 'caller-wins', PATH: '/caller', OPENAI_API_KEY: 'leak', CLAUDECODE: '1', EXTRA: 'x' },
    });
    expect(env).toMatchObject({ JRUN_ID: 'caller-wins', PATH: '/caller', EXTRA: 'x' });
    expect(env).not.toHaveProperty('OPENAI_API_KEY');
    expect(env).not.toHaveProperty('CLAUDECODE');
  });

  it('drops undefined and blank-named inherited entries and leaves its input untouched', () => {
    const base: Record<string, string | undefined> = { A: 'a', B: undefined, ' ': 'blank', CLAUDECODE: '1' };
    const env = buildAgentEnv({ agentType: 'claude', base, jrun });
    expect(env.A).toBe('a');
    expect(env).not.toHaveProperty('B');
    expect(env).not.toHaveProperty(' ');
    expect(base.CLAUDECODE).toBe('1');
  });
});

describe('prependPathDir', () => {
  it('matches whole entries only', () => {
    expect(prependPathDir(['/opt/ra/bin2', '/usr/bin'].join(delimiter), '/opt/ra/bin')).toBe(['/opt/ra/bin', '/opt/ra/bin2', '/usr/bin'].join(delimiter));
  });
});

describe('runAgentBinDir', () => {
  it('uses the folder of the run-agent or conductor script this process was started as', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-bin-'));
    try {
      writeFileSync(join(dir, 'run-agent'), '');
      writeFileSync(join(dir, 'conductor'), '');
      expect(runAgentBinDir(join(dir, 'run-agent'))).toBe(dir);
      expect(runAgentBinDir(join(dir, 'conductor'))).toBe(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('otherwise finds the package bin folder holding run-agent (also for a bare program name)', () => {
    const packageBin = join(__dirname, '..', '..', '..', 'bin');
    expect(runAgentBinDir('/some/other/script.js')).toBe(packageBin);
    expect(runAgentBinDir('run-agent')).toBe(packageBin);
    expect(runAgentBinDir('/nowhere/bin/run-agent')).toBe(packageBin);
    expect(existsSync(join(packageBin, 'run-agent'))).toBe(true);
  });
});
