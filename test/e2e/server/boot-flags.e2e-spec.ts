/**
 * The server's V8 boot flags (apps/api/src/boot/boot-flags.ts), in a Node process of their own:
 * TurboFan and Sparkplug are off while the server boots and back once it is ready, unless the user
 * chose them on Node's command line; the post-boot GC leaves no gc() behind. Needs `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const BOOT_FLAGS = join(__dirname, '..', '..', '..', 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'boot-flags.js');

// V8's %GetOptimizationStatus bits (src/runtime/runtime.h): optimized, baseline (Sparkplug) code.
// TurboFan is asked for (%OptimizeFunctionOnNextCall, ignored while it is off). Sparkplug is asked
// for with %CompileBaseline once it should be on (the call aborts the process while it is off);
// while booting, a function called 5,000 times (which Sparkplug compiles by itself) must stay
// without baseline code.
const OPTIMIZED = 1 << 4;
const BASELINE = 1 << 15;

const PROBE = `
const v8 = require('node:v8');
const vm = require('node:vm');
v8.setFlagsFromString('--allow-natives-syntax');
const boot = require(${JSON.stringify(BOOT_FLAGS)});
const natives = new Function('f', 'mode', \`
  if (mode === 'opt') { %PrepareFunctionForOptimization(f); f(10); %OptimizeFunctionOnNextCall(f); f(10); }
  else if (mode === 'calls') { for (let i = 0; i < 5000; i++) f(10); }
  else { %CompileBaseline(f); f(10); }
  return %GetOptimizationStatus(f);\`);
// a new function per question (its own source: V8 shares compiled code between equal sources)
let made = 0;
const fresh = () => new Function('n', \`// \${++made}\nlet s = 0; for (let i = 0; i < n; i++) s += i % 7; return s;\`);
const booting = { opt: natives(fresh(), 'opt'), baseline: natives(fresh(), 'calls') };
boot.leanBootDone();
const ready = { opt: natives(fresh(), 'opt'), baseline: natives(fresh(), 'baseline') };
const f = fresh();
const before = f(1000);
boot.releaseBootMemory();
process.stdout.write(JSON.stringify({ booting, ready, gcLeft: vm.runInNewContext('typeof gc'), sameResult: f(1000) === before }));
`;

function probe(nodeArgs: string[] = []): { booting: { opt: number; baseline: number }; ready: { opt: number; baseline: number }; gcLeft: string; sameResult: boolean } {
  const r = spawnSync(process.execPath, [...nodeArgs, '-e', PROBE], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

describe('server boot flags', () => {
  it('boots with TurboFan and Sparkplug off and turns them back on once ready; the post-boot GC exposes no gc()', () => {
    const r = probe();
    expect([r.booting.opt & OPTIMIZED, r.booting.baseline & BASELINE]).toEqual([0, 0]);
    expect([r.ready.opt & OPTIMIZED, r.ready.baseline & BASELINE]).toEqual([OPTIMIZED, BASELINE]);
    expect(r.gcLeft).toBe('undefined');
    expect(r.sameResult).toBe(true);
  });

  it("leaves a compiler the user chose on Node's command line as chosen", () => {
    const off = probe(['--no-opt']);
    expect(off.ready.opt & OPTIMIZED).toBe(0);
    expect(off.ready.baseline & BASELINE).toBe(BASELINE);
    const on = probe(['--opt']);
    expect(on.booting.opt & OPTIMIZED).toBe(OPTIMIZED);
    expect(on.booting.baseline & BASELINE).toBe(0);
  });

  it('keeps gc() when the user exposed it', () => {
    expect(probe(['--expose-gc']).gcLeft).toBe('function');
  });
});
