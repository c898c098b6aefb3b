import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

const forbiddenModules = [
  /^@nestjs\/platform-/,
  /^fastify$/,
  /^@fastify\//,
  /^@willsoto\//,
  /^prom-client$/,
  /^nest-commander/,
  /(^|\/)apps\//,
];
const forbiddenIdentifiers = /\b\w*HttpException\b|\bNotFoundException\b|\bBadRequestException\b|\bForbiddenException\b|\bConflictException\b/;
const importSpecifier = /(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g;

describe('library boundaries', () => {
  const libFiles = tsFiles(join(root, 'libs'));

  it('finds the library sources', () => {
    expect(libFiles.length).toBeGreaterThan(0);
  });

  it.each(libFiles.map((f) => [relative(root, f), f]))('%s imports no server or CLI package', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(importSpecifier)].map((m) => m[1]);
    const bad = specifiers.filter((s) => forbiddenModules.some((re) => re.test(s)));
    expect(bad).toEqual([]);
    expect(text).not.toMatch(forbiddenIdentifiers);
  });

  it('each library exports exactly one Nest module from its index', () => {
    for (const lib of ['storage', 'messagebus', 'runner', 'agents', 'planner', 'webhook', 'sandbox', 'triggers']) {
      const index = readFileSync(join(root, 'libs', lib, 'src', 'index.ts'), 'utf8');
      expect(index).toMatch(new RegExp(`export \\* from '\\./${lib}\\.module'`));
    }
  });
});

/**
 * Lib order (docs/architecture.md): a lib imports only libs below it. mcp, planner and scaleout sit
 * on the runner; nothing imports them but the apps. The runner delivers webhooks through libs/webhook. contracts is types only.
 */
const LIB_ORDER = ['contracts', 'storage', 'boot', 'messagebus', 'streams', 'agents', 'sandbox', 'webhook', 'worktree', 'runner', 'orchestration', 'planner', 'mcp', 'scaleout', 'triggers', 'client', 'self-update'];
const ALLOWED_LIB_DEPS: Record<string, string[]> = {
  contracts: [],
  // contracts is types only (`import type`, erased at build): the wire shapes the records share
  storage: ['contracts'],
  boot: ['storage'],
  messagebus: ['storage'],
  // the server's shared SSE hubs: run-log/bus tails, run discovery (no HTTP; apps/api writes the events)
  streams: ['storage', 'messagebus'],
  agents: ['storage', 'contracts'],
  sandbox: ['storage'],
  // boot: the CLI's UsageError for bad flag values (flag-values.ts, tasks/loop-settings.ts)
  // webhook delivery (signing, retries, run_stop/needs_input payloads) and its Nest module; the runner sends through it
  webhook: ['storage'],
  // git worktrees of tasks, their merge queue, setup approval, diff and push (split from the runner, issue #32)
  worktree: ['contracts', 'storage', 'messagebus'],
  runner: ['contracts', 'storage', 'boot', 'messagebus', 'agents', 'sandbox', 'webhook', 'worktree'],
  // goal graphs, workflows, facts, quorum, iterate and the TODO monitor, on the runner's jobs and tasks
  orchestration: ['storage', 'boot', 'messagebus', 'runner'],
  planner: ['storage', 'messagebus', 'runner', 'worktree'],
  mcp: ['storage', 'messagebus', 'runner'],
  scaleout: ['storage', 'messagebus', 'runner'],
  triggers: ['contracts', 'storage'],
  client: ['contracts', 'storage', 'boot', 'runner', 'orchestration'],
  'self-update': [],
};

describe('lib order', () => {
  it('knows every lib', () => {
    const libs = readdirSync(join(root, 'libs')).filter((d) => statSync(join(root, 'libs', d)).isDirectory());
    expect(libs.sort()).toEqual([...LIB_ORDER].sort());
  });

  it.each(LIB_ORDER)('libs/%s imports only the libs below it', (lib) => {
    const used = new Set<string>();
    for (const file of tsFiles(join(root, 'libs', lib, 'src'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(importSpecifier)) {
        const dep = /^@app\/([^/]+)/.exec(m[1])?.[1];
        if (dep && dep !== lib) used.add(dep);
      }
    }
    const rank = (l: string) => LIB_ORDER.indexOf(l);
    expect([...used].filter((d) => !ALLOWED_LIB_DEPS[lib].includes(d) || rank(d) >= rank(lib))).toEqual([]);
  });
});

/**
 * Issue #14: the replaceable parts are constructed only by the lib modules' provider files
 * (`*.providers.ts`); everything else gets them injected or as a parameter.
 */
const REPLACEABLE = /\bnew\s+(AgentRegistry|LivenessProbe|ReplicaLivenessProbe|ChangeFeed|StorageIndex|LocalAgentExecutor|LocalTaskDispatcher|RunnerService|WebhookService|PlannerService|ScaleoutServer|Worker)\b/;

describe('replaceable parts are injected', () => {
  const sources = [...tsFiles(join(root, 'apps')), ...tsFiles(join(root, 'libs'))].filter((f) => !f.endsWith('.spec.ts'));

  it.each(sources.map((f) => [relative(root, f), f]))('%s constructs no replaceable part outside a provider file', (name, file) => {
    const text = readFileSync(file, 'utf8');
    const hits = text.split('\n').filter((line) => REPLACEABLE.test(line) && !/^\s*(\/\/|\*)/.test(line));
    expect(name.endsWith('.providers.ts') ? [] : hits).toEqual([]);
  });

  it('the rule sees a violation', () => {
    expect(REPLACEABLE.test('const probe = new LivenessProbe();')).toBe(true);
    expect(REPLACEABLE.test('const p = createLivenessProbe();')).toBe(false);
  });

  it('each root imports the lib modules', () => {
    const api = readFileSync(join(root, 'apps/api/src/api.module.ts'), 'utf8');
    for (const m of ['StorageModule', 'MessageBusModule', 'AgentsModule', 'RunnerModule', 'PlannerModule', 'WebhookModule']) expect(api).toMatch(new RegExp(`\\b${m}\\.forRoot`));
    const cli = readFileSync(join(root, 'apps/cli/src/cli-lib-modules.ts'), 'utf8');
    expect(readFileSync(join(root, 'apps/cli/src/cli.module.ts'), 'utf8')).toMatch(/imports: require\('\.\/cli-lib-modules'\)\.cliLibModules\(\)/);
    for (const m of ['StorageModule', 'MessageBusModule', 'AgentsModule', 'RunnerModule', 'WebhookModule']) expect(cli).toMatch(new RegExp(`\\b${m}\\.forRoot`));
  });
});
