/**
 * The CapacityPolicy API (autoscaling.signalr.dev/v1alpha1): types, schema, constants, durations,
 * validation and CRD generation. Imports only the capacity layer's constants.
 */
export * from "./constants.js";
export { formatDuration, parseDuration } from "./duration.js";
export * from "./schema.js";
export {
  PolicyError,
  parseCron,
  parsePolicyYaml,
  type SpecValidationResult,
  type ValidationResult,
  validatePolicy,
  validateSpec,
} from "./validate.js";
