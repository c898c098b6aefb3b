export * from './lines';
export * from './claude';
export * from './codex';
export * from './gemini';
export * from './telemetry';
