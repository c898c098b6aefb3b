import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const repoRoot = join(__dirname, '..', '..', '..', '..');
const srcRoot = join(repoRoot, 'libs', 'storage', 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/**
 * Compiles libs/storage to CommonJS in `outDir` (with @swc/core, as jest does) so real child
 * processes can run the library without a full build. Children get NODE_PATH to node_modules.
 * Returns the path of the compiled barrel.
 */
export function compileStorage(outDir: string): string {
  const swc = require('@swc/core') as typeof import('@swc/core');
  for (const file of tsFiles(srcRoot)) {
    const out = join(outDir, relative(srcRoot, file)).replace(/\.ts$/, '.js');
    mkdirSync(join(out, '..'), { recursive: true });
    const { code } = swc.transformFileSync(file, {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
      },
      module: { type: 'commonjs' },
    });
    writeFileSync(out, code);
  }
  return join(outDir, 'index.js');
}

export const childNodePath = join(repoRoot, 'node_modules');
