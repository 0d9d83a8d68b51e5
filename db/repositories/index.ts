export * from './jobs.repo.js';
export * from './comments.repo.js';
export * from './movement-runs.repo.js';
export * from './events.repo.js';
export * from './checkpoints.repo.js';
export * from './lessons.repo.js';
export * from './requests.repo.js';
