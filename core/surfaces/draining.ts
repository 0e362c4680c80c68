// Whether this process is draining (stopping): set once by the shutdown path, read by GET /ready
// (503 while draining) so a load balancer stops sending new requests before connections close.
let draining = false;

export function markDraining(): void {
  draining = true;
}

export function isDraining(): boolean {
  return draining;
}
