/**
 * Shared pieces of the Azure integration tests: an emulator on 127.0.0.1 with a stopped virtual
 * clock (time moves only when a test advances it), a static credential, and adapters wired to
 * both.
 */
import type { AccessToken, TokenCredential } from "@azure/identity";
import { type AzureAdapters, type AzureConnection, createAzureAdapters } from "../../src/azure/index.js";
import {
  createVirtualClock,
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";

export const T0 = new Date("2025-03-03T12:00:30Z");
export const SUB_A = "11111111-1111-1111-1111-111111111111";
export const SUB_B = "22222222-2222-2222-2222-222222222222";

export function signalrId(name: string, sub = SUB_A, rg = "rg-chat"): string {
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.SignalRService/SignalR/${name}`;
}

export function webPubSubId(name: string, sub = SUB_A, rg = "rg-chat"): string {
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.SignalRService/WebPubSub/${name}`;
}

/** A credential that always returns the same token: not a mock of Azure, just a credential. */
export function staticCredential(token = "test-token"): TokenCredential & { calls: number } {
  const credential = {
    calls: 0,
    async getToken(): Promise<AccessToken> {
      credential.calls++;
      return { token, expiresOnTimestamp: Date.now() + 3_600_000 };
    },
  };
  return credential;
}

/** Starts an emulator with a stopped clock at {@link T0} (unless options say otherwise). */
export function startTestEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({
    clock: createVirtualClock({ start: T0, speed: 0 }),
    scaleDurationMs: 120_000,
    ingestionDelayMs: 180_000,
    ...options,
  });
}

/** Puts an emulator shared by a file's tests back as each test expects it: no faults, no requests logged, the clock at {@link T0}. */
export function resetEmulator(emulator: RunningEmulator): void {
  emulator.control.clearFaults();
  emulator.control.resetRequests();
  emulator.control.setClock({ time: T0 });
}

/** The connection settings that point the SDKs at `emulator`. */
export function emulatorConnection(
  emulator: RunningEmulator,
  overrides: Partial<AzureConnection> = {},
): AzureConnection {
  return {
    credential: staticCredential(),
    armEndpoint: emulator.armEndpoint,
    metricsEndpoint: emulator.metricsEndpoint,
    ca: emulator.caPem,
    now: () => emulator.clock.now(),
    requestTimeoutMs: 5_000,
    ...overrides,
  };
}

/** The Azure flags of the CLI's commands (`run`, `check`, `simulate --resource-id`) pointed at `emulator`. */
export function emulatorCliFlags(emulator: RunningEmulator): string[] {
  return [
    "--arm-endpoint",
    emulator.armEndpoint,
    "--metrics-endpoint",
    emulator.metricsEndpointTemplate,
    "--ca-file",
    emulator.caPath,
    "--azure-credential",
    "static",
  ];
}

/** Adapters against `emulator`. */
export function adaptersFor(
  emulator: RunningEmulator,
  overrides: Partial<AzureConnection> = {},
): AzureAdapters {
  return createAzureAdapters(emulatorConnection(emulator, overrides));
}

/** Catches what `fn` throws (fails the test when it does not throw). */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}
