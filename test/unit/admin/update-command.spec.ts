import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { updateRequestBody } from '@app/client';

describe('run-agent server update start: request body', () => {
  const cwd = process.cwd();
  let tmp: string;

  beforeEach(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'update-cmd-')));
    process.chdir(tmp);
  });
  afterEach(() => {
    process.chdir(cwd);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('sends versions as given and local tarballs as absolute paths', () => {
    fs.writeFileSync(path.join(tmp, 'new.tgz'), '');
    expect(updateRequestBody({ package: '0.2.0' })).toEqual({ package: '0.2.0' });
    expect(updateRequestBody({ package: 'conductor-loop@0.2.0' })).toEqual({ package: 'conductor-loop@0.2.0' });
    expect(updateRequestBody({ package: 'new.tgz' })).toEqual({ package: path.join(tmp, 'new.tgz') });
    expect(updateRequestBody({ binary: './new.tgz' })).toEqual({ binary_path: path.join(tmp, 'new.tgz') });
  });

  it('requires exactly one of --package and --binary', () => {
    expect(() => updateRequestBody({})).toThrow('required flag(s) "package" not set');
    expect(() => updateRequestBody({ package: '0.2.0', binary: 'x.tgz' })).toThrow('use either --package or --binary, not both');
  });
});
