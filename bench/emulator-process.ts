/**
 * The benchmark's Azure emulator, in its own process so that the operator's process holds only
 * the operator (honest CPU and memory figures). Real time (speed 1), no noise, ARM rate limit on.
 * Prints one JSON line with the endpoints and the CA path, then runs until SIGTERM / SIGINT.
 */
import { startEmulator } from "../src/emulator/index.js";

const emulator = await startEmulator({
  speed: 1,
  noiseAmplitude: 0,
  armRateLimit: true,
  scaleDurationMs: 180_000,
  ingestionDelayMs: 180_000,
});

process.stdout.write(
  `${JSON.stringify({
    url: emulator.url,
    armEndpoint: emulator.armEndpoint,
    metricsEndpointTemplate: emulator.metricsEndpointTemplate,
    controlEndpoint: emulator.controlEndpoint,
    caPath: emulator.caPath,
  })}\n`,
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void emulator.stop().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// The parent's death closes the pipe: stop with it.
process.stdin.on("end", stop);
process.stdin.resume();
