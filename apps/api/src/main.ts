import { startServer } from './server';

export * from './server';

/** Direct start of the API (the `conductor` / `run-agent serve` entry points live in apps/cli). */
if (require.main === module) {
  const root = process.env.CONDUCTOR_ROOT ?? process.env.RUN_AGENT_ROOT;
  if (!root) {
    console.error('Error: set CONDUCTOR_ROOT (or use `run-agent serve`)');
    process.exitCode = 2;
  } else {
    startServer({
      root,
      logger: true,
      host: process.env.CONDUCTOR_HOST?.trim() || undefined,
      apiKey: process.env.CONDUCTOR_API_KEY?.trim() || undefined,
      insecureNoAuth: ['1', 'true', 'yes', 'on'].includes(process.env.CONDUCTOR_INSECURE_NO_AUTH?.trim().toLowerCase() ?? ''),
    })
      .then(({ app }) => {
        const stop = () => void app.close().then(() => process.exit(0));
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      })
      .catch((err) => {
        console.error(`Error: ${(err as Error).message}`);
        process.exitCode = 1;
      });
  }
}
