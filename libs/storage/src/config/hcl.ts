/**
 * The flat HCL subset upstream reads (cli-storage.md §5.5): top-level `name {` blocks holding
 * `key = value` lines; `#` and `//` whole-line comments; no nesting, lists or inline comments.
 * Produces the same raw shape as a YAML config so one normaliser handles both.
 */

interface HclBlock {
  name: string;
  values: Map<string, string>;
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
  }
  return value;
}

function parseBlocks(text: string): HclBlock[] {
  const blocks: HclBlock[] = [];
  let current: HclBlock | undefined;
  text.split(/\r?\n/).forEach((rawLine, i) => {
    const lineNum = i + 1;
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('//')) return;
    if (!current) {
      if (!line.endsWith('{')) throw new Error(`line ${lineNum}: expected block open (name {), got: ${JSON.stringify(line)}`);
      const name = line.slice(0, -1).trim();
      if (name === '') throw new Error(`line ${lineNum}: empty block name`);
      if (/[ \t]/.test(name)) throw new Error(`line ${lineNum}: block name ${JSON.stringify(name)} must not contain spaces`);
      current = { name, values: new Map() };
      return;
    }
    if (line === '}') {
      blocks.push(current);
      current = undefined;
      return;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`line ${lineNum}: expected key = value, got: ${JSON.stringify(line)}`);
    current.values.set(line.slice(0, eq).trim(), unquote(line.slice(eq + 1).trim()));
  });
  if (current) throw new Error(`unexpected end of file: block ${JSON.stringify(current.name)} not closed`);
  return blocks;
}

/** Go's strconv.Atoi, with its error text. */
function atoi(key: string, value: string): number {
  if (!/^[-+]?\d+$/.test(value)) throw new Error(`${key}: strconv.Atoi: parsing ${JSON.stringify(value)}: invalid syntax`);
  return Number(value);
}

function intFields(block: HclBlock, keys: string[], target: Record<string, unknown>): void {
  for (const key of keys) {
    const v = block.values.get(key);
    if (v !== undefined) target[key] = atoi(key, v);
  }
}

/** Parses HCL text into the raw (YAML-shaped) config object. Errors carry `line N:` positions. */
export function parseHcl(text: string): Record<string, unknown> {
  const raw: Record<string, any> = { agents: {}, defaults: {}, api: {}, storage: {} };
  for (const block of parseBlocks(text)) {
    try {
      switch (block.name) {
        case 'defaults': {
          const agent = block.values.get('agent');
          if (agent !== undefined) raw.defaults.agent = agent;
          intFields(block, ['timeout', 'max_concurrent_runs', 'max_concurrent_root_tasks'], raw.defaults);
          break;
        }
        case 'api': {
          const host = block.values.get('host');
          if (host !== undefined) raw.api.host = host;
          intFields(block, ['port'], raw.api);
          break;
        }
        case 'storage': {
          const runsDir = block.values.get('runs_dir');
          if (runsDir !== undefined) raw.storage.runs_dir = runsDir;
          break;
        }
        default: {
          const agent: Record<string, string> = {};
          for (const key of ['type', 'token', 'token_file', 'base_url', 'model', 'command']) {
            const v = block.values.get(key);
            if (v !== undefined) agent[key] = v;
          }
          raw.agents[block.name] = agent;
        }
      }
    } catch (err) {
      const kind = ['defaults', 'api', 'storage'].includes(block.name) ? `${block.name} block: ` : '';
      throw new Error(`${kind}${(err as Error).message}`);
    }
  }
  return raw;
}
