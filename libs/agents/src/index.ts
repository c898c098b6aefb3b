export * from './agents.module';
