/**
 * A timer for "nothing arrived from the peer for `ms`", shared by the body idle timeout
 * (body-idle-timeout.ts) and a live stream's idle limit (live/listen-socket.ts). When due, it
 * decides after the next poll for I/O: after a pause of this process (a GC, a busy machine) the
 * timer is due with the peer's bytes still unread, and reading them re-arms it, so the peer is
 * never blamed for this process's own stall.
 */
export interface IdleTimer {
  /** (Re)starts the wait: `onIdle` runs once `ms` pass with no other `arm` or `disarm`. */
  arm(): void;
  disarm(): void;
}

export function idleTimer(ms: number, onIdle: () => void): IdleTimer {
  let timer: NodeJS.Timeout | undefined;
  let check: NodeJS.Immediate | undefined;
  const disarm = () => {
    clearTimeout(timer);
    clearImmediate(check);
    timer = check = undefined;
  };
  return {
    arm() {
      disarm();
      timer = setTimeout(() => {
        timer = undefined;
        check = setImmediate(() => {
          check = undefined;
          onIdle();
        });
      }, ms);
    },
    disarm,
  };
}
