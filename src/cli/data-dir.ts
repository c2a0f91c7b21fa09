import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** What {@link defaultRedisDir} depends on; injectable so every platform is testable anywhere. */
interface DataDirEnvironment {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
}

/**
 * The user's data directory for rankd, following each platform's convention: XDG on Linux (and
 * other Unixes), `~/Library/Application Support` on macOS, `%LOCALAPPDATA%` on Windows.
 */
function rankdDataDir(
  where: DataDirEnvironment = { platform: process.platform, env: process.env, home: homedir() },
): string {
  const { platform, env, home } = where;
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'rankd');
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? join(home, 'AppData', 'Local'), 'rankd');
  // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
  const xdg = env.XDG_DATA_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, '.local', 'share'), 'rankd');
}

/** Where `rankd redis` keeps the data of the instance on `port`, unless `--dir` says otherwise. */
export function defaultRedisDir(port: number, where?: DataDirEnvironment): string {
  return join(rankdDataDir(where), `redis-${port}`);
}
