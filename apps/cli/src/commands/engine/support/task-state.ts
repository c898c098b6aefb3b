/** Sorted names of the run folders of a task; undefined when `runs/` does not exist. */
export { listFolderNames as listRunNames } from '@app/storage';
