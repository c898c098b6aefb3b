import { closeSync, constants, fstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendAllOrNothing, appendRecordSync } from '@app/storage';
import { itWithTmpfs, mountTmpfs, type Tmpfs } from '../../utils/tmpfs';

const itMounted = itWithTmpfs('append-only ENOSPC tests');

describe('all-or-nothing appends on a full disk (real 64 KiB tmpfs, issue #11)', () => {
  itMounted('appendAllOrNothing truncates a partial write back and rethrows ENOSPC', () => {
    const fs = mountTmpfs('64k', 'append-') as Tmpfs;
    try {
      const path = join(fs.dir, 'log');
      writeFileSync(path, 'kept\n');
      const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND);
      try {
        const big = Buffer.alloc(200 * 1024, 0x61);
        expect(() => appendAllOrNothing(fd, big, fstatSync(fd).size)).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
        expect(readFileSync(path, 'utf8')).toBe('kept\n');
        expect(appendAllOrNothing(fd, Buffer.from('next\n'), fstatSync(fd).size)).toBe(5);
      } finally {
        closeSync(fd);
      }
      expect(readFileSync(path, 'utf8')).toBe('kept\nnext\n');
    } finally {
      fs.release();
    }
  });

  itMounted('appendRecordSync (the audit log) leaves no torn line after ENOSPC', () => {
    const fs = mountTmpfs('64k', 'append-') as Tmpfs;
    try {
      const path = join(fs.dir, 'audit.jsonl');
      appendRecordSync(path, '{"n":1}\n', { fsync: true });
      expect(() => appendRecordSync(path, `{"big":"${'x'.repeat(200 * 1024)}"}\n`, { fsync: true })).toThrow(/ENOSPC/);
      appendRecordSync(path, '{"n":2}\n', { fsync: true });
      expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    } finally {
      fs.release();
    }
  });
});
