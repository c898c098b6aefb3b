import { DynamicModule, Module, ModuleMetadata, Provider } from '@nestjs/common';
import {
  CHANGE_FEED,
  createChangeFeed,
  createStorageIndex,
  createLivenessProbe,
  LIVENESS_PROBE,
  STORAGE_INDEX,
  STORAGE_INDEX_FACTORY,
  STORAGE_OPTIONS,
  StorageIndexFactory,
  storageIndexFactory,
  StorageModuleOptions,
} from './storage.providers';
import { LivenessProbe } from './liveness';

export interface StorageModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: any[];
  useFactory: (...deps: any[]) => StorageModuleOptions & { root: string };
}

function seams(): Provider[] {
  return [
    { provide: LIVENESS_PROBE, useFactory: createLivenessProbe },
    { provide: CHANGE_FEED, useFactory: createChangeFeed },
    { provide: STORAGE_INDEX_FACTORY, inject: [LIVENESS_PROBE], useFactory: (probe: LivenessProbe) => storageIndexFactory(probe) },
  ];
}

const indexProvider: Provider = {
  provide: STORAGE_INDEX,
  inject: [STORAGE_OPTIONS, STORAGE_INDEX_FACTORY],
  useFactory: (opts: StorageModuleOptions, make: StorageIndexFactory) => (opts.indexProbe ? createStorageIndex(opts.root!, opts.indexProbe) : make(opts.root!)),
};

const EXPORTS = [STORAGE_OPTIONS, LIVENESS_PROBE, CHANGE_FEED, STORAGE_INDEX_FACTORY];

/**
 * The process-wide storage seams, global to the app that imports it: one LivenessProbe, one
 * ChangeFeed (shared watchers), a StorageIndex factory and, given a root, that root's StorageIndex.
 */
@Module({})
export class StorageModule {
  static forRoot(options: StorageModuleOptions = {}): DynamicModule {
    const withIndex = options.root !== undefined;
    return {
      module: StorageModule,
      global: true,
      providers: [{ provide: STORAGE_OPTIONS, useValue: options }, ...seams(), ...(withIndex ? [indexProvider] : [])],
      exports: withIndex ? [...EXPORTS, STORAGE_INDEX] : EXPORTS,
    };
  }

  static forRootAsync(opts: StorageModuleAsyncOptions): DynamicModule {
    return {
      module: StorageModule,
      global: true,
      imports: opts.imports ?? [],
      providers: [{ provide: STORAGE_OPTIONS, inject: opts.inject ?? [], useFactory: opts.useFactory }, ...seams(), indexProvider],
      exports: [...EXPORTS, STORAGE_INDEX],
    };
  }
}

