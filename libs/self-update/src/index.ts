/**
 * Self-update of the installed npm package (issue #32 moved it out of apps/api): the candidate
 * (a tarball or a registry version), verification, the package swap with its rollback copy, the
 * handoff to the new server on the same port, and the state machine (SelfUpdater) that defers
 * while root runs are active. apps/api's SelfUpdateService and controller wire it to the server.
 */
export * from './self-updater';
export { PACKAGE_NAME, parseCandidate, describeCandidate, CandidateError, type Candidate, candidateVersion, extractPackage, installDependencies, missingDependencies, packFromRegistry, readManifest } from './candidate-package';
export * from './handoff';
export * from './package-swap';
