/**
 * Who this process is, precisely enough to tell when another process is certainly dead. A host name and a
 * pid are not enough: containers that share their host's name each have their own PID namespace, where a
 * live process's pid is not alive, or is another process. So a holder (of a lock, of the store's lease)
 * records its host, the kernel's boot id (`/proc/sys/kernel/random/boot_id`: a reboot is another machine)
 * and its PID namespace (`readlink /proc/self/ns/pid`, e.g. `pid:[4026531836]`), and its pid is only judged
 * by a process with all three equal. Where they cannot be read (not Linux), they are undefined, and no
 * holder is ever certainly dead: it is then waited for until its own heartbeat goes stale.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ProcessIdentity {
  host: string;
  /** The kernel's boot id; undefined where unreadable. */
  boot_id?: string;
  /** The PID namespace, `pid:[inode]`; undefined where unreadable. */
  pid_ns?: string;
  pid: number;
}

/** The part of a holder record certainlyDead reads (older records lack boot_id and pid_ns). */
export interface HolderIdentity {
  host: string;
  boot_id?: string;
  pid_ns?: string;
  pid: number;
}

let identity: ProcessIdentity | undefined;

/** This process's identity, read once. */
export function processIdentity(): ProcessIdentity {
  identity ??= {
    host: hostname(),
    boot_id: readOrUndefined(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    pid_ns: readOrUndefined(() => readlinkSync('/proc/self/ns/pid')),
    pid: process.pid,
  };
  return { ...identity };
}

function readOrUndefined(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` names a live process of this PID namespace (EPERM: alive, someone else's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `holder` ran on this machine, in this boot and in this PID namespace: only then does its pid mean what ours do. */
export function sameProcessSpace(holder: HolderIdentity): boolean {
  const me = processIdentity();
  return (
    me.boot_id !== undefined &&
    me.pid_ns !== undefined &&
    holder.host === me.host &&
    holder.boot_id === me.boot_id &&
    holder.pid_ns === me.pid_ns
  );
}

/**
 * True only when `holder` is certainly a dead process: the same host, boot and PID namespace as this one
 * (all known), not this process, and its pid not alive. False whenever in doubt (another machine or
 * container, an older record without boot_id or pid_ns): such a holder is waited for until its lease or
 * heartbeat expires.
 */
export function certainlyDead(holder: HolderIdentity): boolean {
  return sameProcessSpace(holder) && holder.pid !== process.pid && !pidAlive(holder.pid);
}
