/**
 * The child processes of the local cluster (etcd, kube-apiserver, Prometheus): each in a process
 * group of its own with its output in a log file, stopped with SIGTERM then SIGKILL, and killed
 * (with its temporary directory removed) however this process ends. Also the loopback helpers
 * their starters share: free ports, an HTTP(S) GET probe and a wait-until-ready loop.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child process in its own process group, stdout and stderr appended to `logFile`. */
export class ManagedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  private exit: Exit | undefined;

  constructor(
    readonly name: string,
    bin: string,
    args: readonly string[],
    readonly logFile: string,
  ) {
    const fd = openSync(logFile, "a");
    try {
      // detached: its own process group, so stop() reaches anything it forks.
      this.child = spawn(bin, args, { detached: true, stdio: ["ignore", fd, fd] });
    } finally {
      closeSync(fd);
    }
    this.exited = new Promise<Exit>((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
      this.child.once("error", (err) => {
        writeFileSync(logFile, `spawn failed: ${err.message}\n`, { flag: "a" });
        this.exit = { code: -1, signal: null };
        resolve(this.exit);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): Exit | undefined {
    return this.exit;
  }

  killGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  }

  /** SIGTERM to the group, SIGKILL after `graceMs` (default 10 s) if it has not exited. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.child.pid === undefined) return;
    if (this.exit === undefined) {
      this.killGroup("SIGTERM");
      const timer = sleep(graceMs, "timeout" as const, { ref: false });
      if ((await Promise.race([this.exited, timer])) === "timeout") {
        this.killGroup("SIGKILL");
        await this.exited;
      }
    }
    // Stragglers in the group, if any.
    this.killGroup("SIGKILL");
  }

  /** Whether it exited (and how), and the last `lines` lines of its log. */
  async describeFailure(lines = 30): Promise<string> {
    const status = this.exit
      ? `exited (code ${this.exit.code}, signal ${this.exit.signal})`
      : "still running";
    return `${this.name} ${status}; last lines of ${this.logFile}:\n${await tailOf(this.logFile, lines)}`;
  }
}

async function tailOf(file: string, lines: number): Promise<string> {
  try {
    const text = await readFile(file, "utf8");
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

// ---------------------------------------------------------------------------
// Cleanup on exit, however the process ends.

interface Live {
  dir: string;
  keepDir: boolean;
  processes: () => readonly ManagedProcess[];
}

const live = new Set<Live>();
let handlersInstalled = false;

function cleanupAllSync(): void {
  for (const entry of live) {
    for (const p of entry.processes()) p.killGroup("SIGKILL");
    if (!entry.keepDir) rmSync(entry.dir, { recursive: true, force: true });
  }
  live.clear();
}

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once("exit", cleanupAllSync);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const handler = (): void => {
      // When the program handles the signal itself, it stops its processes in its own time
      // (the exit handler is the backstop). Otherwise clean up, restore the default, re-raise.
      if (process.listenerCount(sig) > 1) return;
      cleanupAllSync();
      process.removeListener(sig, handler);
      process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
}

/**
 * A detached bash that outlives this process if it is killed outright
 * (SIGKILL, crash): it waits for our pid to vanish, then kills the process
 * groups listed in <dir>/pgids and removes <dir>.
 */
function startWatchdog(dir: string, keepDir: boolean): ChildProcess {
  const script = [
    'parent="$1"; dir="$2"; keep="$3"',
    'while kill -0 "$parent" 2>/dev/null; do sleep 1; done',
    'if [ -f "$dir/pgids" ]; then for g in $(cat "$dir/pgids"); do kill -KILL -- "-$g" 2>/dev/null; done; fi',
    '[ "$keep" = 1 ] || rm -rf "$dir"',
  ].join("\n");
  const child = spawn("bash", ["-c", script, "watchdog", String(process.pid), dir, keepDir ? "1" : "0"], {
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return child;
}

export interface Tracked {
  /** Writes the process groups of `processes()` to <dir>/pgids for the watchdog; call after each start. */
  recordPgids(): void;
  /** Stops tracking (the caller has stopped the processes and handles the directory). */
  release(): void;
}

/**
 * Kills `processes()` and removes `dir` (unless `keepDir`) when this process exits, is signalled,
 * or is killed outright.
 */
export function trackForCleanup(
  dir: string,
  keepDir: boolean,
  processes: () => readonly ManagedProcess[],
): Tracked {
  const entry: Live = { dir, keepDir, processes };
  installExitHandlers();
  live.add(entry);
  const watchdog = startWatchdog(dir, keepDir);
  return {
    recordPgids: () => {
      const pids = processes().flatMap((p) => (p.pid === undefined ? [] : [String(p.pid)]));
      writeFileSync(join(dir, "pgids"), `${pids.join("\n")}\n`);
    },
    release: () => {
      live.delete(entry);
      if (watchdog.pid !== undefined) {
        try {
          process.kill(-watchdog.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
  };
}

// ---------------------------------------------------------------------------
// Loopback helpers

async function freePort(): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `count` distinct ports free on 127.0.0.1 at the time of asking. Another process may take one
 * before the caller binds it: callers retry on "address already in use".
 */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export interface Probe {
  status: number;
  body: string;
}

/** One GET with a 5 s timeout; `ca` (PEM) for https, `token` as a bearer token. */
export function get(url: string, options: { ca?: string; token?: string } = {}): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers["Authorization"] = `Bearer ${options.token}`;
    const isHttps = url.startsWith("https:");
    const req = (isHttps ? https : http).get(
      url,
      isHttps && options.ca !== undefined
        ? { ca: options.ca, headers, timeout: 5_000 }
        : { headers, timeout: 5_000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

/**
 * Polls `probe` every 100 ms until it returns true; a string from it is a reason to stop waiting.
 * Throws, with `proc`'s last log lines, when `proc` exits first, `probe` gives a reason, or
 * `deadline` (epoch ms) passes; throws the abort reason when `signal` aborts.
 */
export async function waitFor(
  what: string,
  proc: ManagedProcess,
  deadline: number,
  probe: () => Promise<boolean | string>,
  signal?: AbortSignal,
): Promise<void> {
  let lastError = "";
  for (;;) {
    signal?.throwIfAborted();
    if (proc.hasExited) {
      throw new Error(`${what}: ${await proc.describeFailure()}`);
    }
    let result: boolean | string = false;
    try {
      result = await probe();
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (result === true) return;
    if (typeof result === "string") throw new Error(`${what}: ${result}; ${await proc.describeFailure()}`);
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: timed out (last error: ${lastError || "none"}); ${await proc.describeFailure()}`,
      );
    }
    await sleep(100);
  }
}
