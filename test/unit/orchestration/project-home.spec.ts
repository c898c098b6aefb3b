import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { findProjectByHomeFolder, initProjectHome, readHomeFolders, suggestProjectId } from '@app/storage';
import { promptProjectInit, resolveProject } from '../../../apps/cli/src/commands/orchestration/project-scope';

describe('project homes', () => {
  let dir: string;
  let root: string;
  let src: string;
  const saved = process.env.JRUN_PROJECT_ID;
  beforeEach(() => {
    delete process.env.JRUN_PROJECT_ID;
    dir = mkdtempSync(join(tmpdir(), 'project-home-'));
    root = join(dir, 'runs');
    src = join(dir, 'My Cool_Repo');
    mkdirSync(join(src, 'pkg', 'deep'), { recursive: true });
    writeFileSync(join(src, 'package.json'), '{}');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved !== undefined) process.env.JRUN_PROJECT_ID = saved;
  });

  function io(answer: string | undefined): { input: PassThrough; output: PassThrough; text: () => string } {
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (d: Buffer) => (text += d.toString()));
    if (answer === undefined) input.end();
    else input.end(`${answer}\n`);
    return { input, output, text: () => text };
  }

  it('suggests an id from the folder name', () => {
    expect(suggestProjectId(src)).toBe('my-cool-repo');
  });

  it('init writes home-folders.md and an empty project bus, keeping other keys', () => {
    const projectDir = initProjectHome(root, 'demo', src);
    expect(readHomeFolders(root, 'demo')).toEqual({ project_root: src });
    expect(readFileSync(join(projectDir, 'PROJECT-MESSAGE-BUS.md'), 'utf8')).toBe('');
    writeFileSync(join(projectDir, 'home-folders.md'), `project_root: /old\nsource_folders:\n  - path: ${src}/pkg\n`);
    initProjectHome(root, 'demo', src);
    expect(readHomeFolders(root, 'demo')).toEqual({ project_root: src, source_folders: [{ path: `${src}/pkg` }] });
    expect(() => initProjectHome(root, 'Bad/Id', src)).toThrow(/invalid project ID/);
  });

  it('interactive init takes the suggestion on an empty answer', async () => {
    const t = io('');
    await expect(promptProjectInit(root, src, t)).resolves.toBe('my-cool-repo');
    expect(t.text()).toBe(`No project found for: ${src}\nProject ID [my-cool-repo]: Project "my-cool-repo" created at ${join(root, 'my-cool-repo')}\n`);
    expect(findProjectByHomeFolder(root, src)).toBe('my-cool-repo');
  });

  it('interactive init validates the answer and is cancelled by EOF', async () => {
    await expect(promptProjectInit(root, src, io('Not Valid'))).rejects.toThrow(/invalid project ID "Not Valid"/);
    await expect(promptProjectInit(root, src, io(undefined))).rejects.toThrow('project init cancelled');
    expect(existsSync(root)).toBe(false);
  });

  it('infers the project from the home-folders link of the source root above the cwd', async () => {
    initProjectHome(root, 'linked', src);
    await expect(resolveProject(undefined, root, { cwd: join(src, 'pkg', 'deep'), interactive: false })).resolves.toBe('linked');
    await expect(resolveProject('explicit', root, { cwd: src, interactive: false })).resolves.toBe('explicit');
    await expect(resolveProject(undefined, root, { cwd: dir, interactive: false })).rejects.toThrow(/cannot infer project/);
  });
});
