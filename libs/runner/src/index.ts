export * from './runner.module';
