export * from './webhook.module';
export * from './webhook.service';
