import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sandbox } from './inspect-helpers';

const BLOCK = [
  '# >>> conductor-loop shell aliases (managed by run-agent shell-setup) >>>',
  '# Safe opt-in: aliases are installed only when this command is run explicitly.',
  '# Remove with: run-agent shell-setup uninstall',
  "alias claude='ra wrap --agent claude --'",
  "alias codex='ra wrap --agent codex --'",
  "alias gemini='ra wrap --agent gemini --'",
  '# <<< conductor-loop shell aliases (managed by run-agent shell-setup) <<<',
  '',
].join('\n');

describe('run-agent shell-setup', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  it('install then uninstall is idempotent and restores the file', async () => {
    const rc = join(sb.dir, 'my.rc');
    writeFileSync(rc, 'export A=1');
    const first = await sb.run(['shell-setup', 'install', '--rc-file', rc, '--run-agent-bin', 'ra']);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`installed shell aliases in ${rc} (custom)\nrun \`source ${rc}\` or open a new shell session to apply changes\n`);
    expect(readFileSync(rc, 'utf8')).toBe(`export A=1\n\n${BLOCK}`);
    const again = await sb.run(['shell-setup', 'install', '--rc-file', rc, '--run-agent-bin', 'ra']);
    expect([again.code, again.stdout]).toEqual([0, `shell aliases already installed in ${rc}\n`]);
    expect(readFileSync(rc, 'utf8')).toBe(`export A=1\n\n${BLOCK}`);

    const removed = await sb.run(['shell-setup', 'uninstall', '--rc-file', rc]);
    expect([removed.code, removed.stdout]).toEqual([0, `removed shell aliases from ${rc} (custom)\n`]);
    expect(readFileSync(rc, 'utf8')).toBe('export A=1\n');
    const absent = await sb.run(['shell-setup', 'uninstall', '--rc-file', rc]);
    expect([absent.code, absent.stdout]).toEqual([0, `shell aliases are already absent in ${rc}\n`]);
  });

  it('picks ~/.bashrc or ~/.zshrc from --shell or $SHELL', async () => {
    const bash = await sb.run(['shell-setup', 'install', '--shell', 'bash']);
    expect(bash.stdout).toContain(`installed shell aliases in ${join(sb.home, '.bashrc')} (bash)`);
    expect(readFileSync(join(sb.home, '.bashrc'), 'utf8')).toContain("alias claude='run-agent wrap --agent claude --'");
    const zsh = await sb.run(['shell-setup', 'install'], { env: { SHELL: '/usr/bin/zsh' } });
    expect(zsh.stdout).toContain(`(zsh)`);
    expect(existsSync(join(sb.home, '.zshrc'))).toBe(true);
    const tilde = await sb.run(['shell-setup', 'uninstall', '--rc-file', '~/.zshrc']);
    expect(tilde.stdout).toBe(`removed shell aliases from ${join(sb.home, '.zshrc')} (custom)\n`);
  });

  it('rejects bad input in one line and leaves the file alone', async () => {
    const rc = join(sb.dir, 'broken.rc');
    const broken = 'x\n# >>> conductor-loop shell aliases (managed by run-agent shell-setup) >>>\nalias a=b\n';
    writeFileSync(rc, broken);
    const noEnd = await sb.run(['shell-setup', 'install', '--rc-file', rc]);
    expect([noEnd.code, noEnd.stderr]).toEqual([1, 'Error: found shell-setup start marker without end marker\n']);
    const noEndUninstall = await sb.run(['shell-setup', 'uninstall', '--rc-file', rc]);
    expect(noEndUninstall.code).toBe(1);
    expect(readFileSync(rc, 'utf8')).toBe(broken);
    const fish = await sb.run(['shell-setup', 'install', '--shell', 'fish']);
    expect([fish.code, fish.stderr]).toEqual([2, 'Error: unsupported shell "fish" (expected zsh or bash)\n']);
    const noShell = await sb.run(['shell-setup', 'install'], { env: { SHELL: '' } });
    expect(noShell.code).toBe(2);
    const quoted = await sb.run(['shell-setup', 'install', '--rc-file', rc, '--run-agent-bin', "ra 'x"]);
    expect(quoted.code).toBe(2);
    expect(readFileSync(rc, 'utf8')).toBe(broken);
    expect(existsSync(join(sb.home, '.bashrc'))).toBe(false);
  });
});
