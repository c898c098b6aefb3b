/**
 * The plain composition root of the hot commands (issue #32): the parts the Nest container gives
 * the command classes (StorageModule's, RunnerModule's, AgentsModule's and WebhookModule's
 * providers), built by the libs' own provider factories (`*.providers.ts`) without NestJS's container.
 * The runner (with the agent registry and the webhook sender) is built on first use: `status` and
 * `list` never load it.
 */
import { createAgentRegistry } from '@app/agents';
import { type BusWriters, createBusWriters } from '@app/messagebus';
import { type AgentExecutor, createAgentExecutor, createRunnerService, type RunnerService } from '@app/runner';
import { type WebhookSender } from '@app/webhook';
import { type ChangeFeed, createChangeFeed, createLivenessProbe, storageIndexFactory, type LivenessProbe, type StorageIndexFactory } from '@app/storage';
import { createWebhookService } from '@app/webhook';
import { fdStdout, type TextOut } from '@app/boot';

/** The parts a hot command may take (StatusSeams, ListSeams, OutputSeams, StopSeams, TaskSeams, JobSeams are subsets). */
export interface PlainSeams {
  probe: LivenessProbe;
  indexFor: StorageIndexFactory;
  feed: ChangeFeed;
  /** The bus-writer factory (MessageBusModule.forRoot()'s: no app-wide writer settings in the CLI). */
  writers: BusWriters;
  /** The runner of this root (built on first call, with its shutdown hooks). */
  runner(): RunnerService;
  /** Standard output without process.stdout's stream (fdStdout). */
  stdout: TextOut;
}

/** Parts to swap, as overrideProvider does in a Nest testing module (test/e2e/di runs both roots). */
export interface PlainParts {
  probe?: LivenessProbe;
  feed?: ChangeFeed;
  executor?: AgentExecutor;
  webhookSender?: WebhookSender;
  stdout?: TextOut;
}

// the signals NestJS's enableShutdownHooks() listens to (its ShutdownSignal enum)
const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGSEGV', 'SIGUSR2', 'SIGTERM'];

/**
 * What the Nest path's enableShutdownHooks() does for RunnerService: on a signal, stop the agents
 * this process started, then die of that signal. Returns the function that removes the listeners.
 */
function stopOnSignals(runner: RunnerService): () => void {
  let received = false;
  const cleanup = (signal: NodeJS.Signals): void => {
    if (received) return;
    received = true;
    void runner.onApplicationShutdown(signal).then(
      () => {
        off();
        process.kill(process.pid, signal);
      },
      (err: unknown) => {
        process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  const off = () => SHUTDOWN_SIGNALS.forEach((s) => process.removeListener(s, cleanup));
  SHUTDOWN_SIGNALS.forEach((s) => process.on(s, cleanup));
  return off;
}

/** One probe shared by the index factory and the runner, as the lib modules wire them. */
export function plainRoot(parts: PlainParts = {}): PlainSeams & { close(): void } {
  const probe = parts.probe ?? createLivenessProbe();
  let runner: RunnerService | undefined;
  let made: BusWriters | undefined;
  // made on first write: `status` and `list` never load the bus writer
  const writers: BusWriters = (path, overrides) => (made ??= createBusWriters())(path, overrides);
  let offSignals: (() => void) | undefined;
  const indexFor = storageIndexFactory(probe);
  return {
    probe,
    indexFor,
    feed: parts.feed ?? createChangeFeed(),
    writers,
    stdout: parts.stdout ?? fdStdout(),
    runner() {
      if (!runner) {
        // RunnerModule.forRoot({ stopOnShutdown: true }), AgentsModule, WebhookModule.forRoot() of cli-lib-modules.ts
        const executor = parts.executor ?? createAgentExecutor();
        const webhookSender = parts.webhookSender ?? createWebhookService();
        runner = createRunnerService({ executor, registry: createAgentRegistry(), probe, writers, indexFor, webhookSender }, { stopOnShutdown: true });
        offSignals = stopOnSignals(runner);
      }
      return runner;
    },
    /** As the Nest path's app.close(): the signal listeners go once the command is done. */
    close() {
      offSignals?.();
    },
  };
}
