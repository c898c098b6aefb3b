// The runner service for the lazily loaded command groups that inject it (cli.module.ts).
export { RunnerService } from '@app/runner';
