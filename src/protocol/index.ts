export * from './types.js';
export * from './json-value.js';
export * from './errors.js';
export * from './validate.js';
export * from './render.js';
export * from './json.js';
export * from './round.js';
export * from './answers.js';
