import { createServer } from 'node:net';

/** Listens on loopback `port` (0: any) and closes again: resolves the port it got. */
function listenAndClose(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A free TCP port on loopback (never 6379 in practice: the OS hands out ephemeral ports). */
export async function freePort(): Promise<number> {
  return listenAndClose(0);
}

/** Whether loopback `port` is free now (nothing listens on it; it may be taken the next moment). */
export async function portIsFree(port: number): Promise<boolean> {
  return listenAndClose(port).then(
    () => true,
    () => false,
  );
}
