export * from './messagebus.module';
