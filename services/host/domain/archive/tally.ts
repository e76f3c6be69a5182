import { pathKey, shownPath } from "./paths.js";
import { UploadRefused, type UploadLimits } from "./types.js";

/**
 * What an upload holds so far, counted as it streams: the quotas are checked on every chunk (so a bomb stops at its
 * cap) and every path against the earlier ones (duplicates after NFC and case folding, and a file where a folder is).
 */
export class UploadTally {
  files = 0;
  bytes = 0;
  private folderEntries = 0;
  /** Earlier files and folders by pathKey, with the path as first named. */
  private readonly filePaths = new Map<string, string>();
  private readonly folderPaths = new Map<string, string>();

  constructor(private readonly limits: UploadLimits) {}

  /** A directory entry: nothing to store, but a name to reserve (folders are at most as many as the file cap). */
  folder(raw: string, path: string): void {
    if (path === "") return;
    if (++this.folderEntries > this.limits.deployFiles)
      throw quota(raw, `the archive has more than ${this.limits.deployFiles} folders`);
    const key = pathKey(path);
    const file = this.filePaths.get(key);
    if (file !== undefined) throw duplicate(raw, `the file ${file} has the same name`);
    this.reserveFolders(raw, key, path, true);
  }

  /** A file starts; `size` when declared up front (a tar header), so a file that cannot fit stops before its bytes. */
  file(raw: string, path: string, size?: number): void {
    const key = pathKey(path);
    const earlier = this.filePaths.get(key) ?? this.folderPaths.get(key);
    if (earlier !== undefined) throw duplicate(raw, `${earlier} is the same path (case and Unicode form aside)`);
    this.reserveFolders(raw, key, path, false);
    if (++this.files > this.limits.deployFiles)
      throw quota(raw, `the deploy has more than ${this.limits.deployFiles} files`);
    this.filePaths.set(key, path);
    if (size !== undefined) this.refuseBeyond(raw, size, this.bytes + size);
  }

  /** `n` more bytes of the current file, which now has `fileSize`. */
  add(raw: string, fileSize: number, n: number): void {
    this.bytes += n;
    this.refuseBeyond(raw, fileSize, this.bytes);
  }

  private refuseBeyond(raw: string, fileSize: number, total: number): void {
    const { fileBytes, deployBytes, storageLeft } = this.limits;
    if (!Number.isSafeInteger(fileSize) || fileSize < 0 || fileSize > fileBytes)
      throw quota(raw, `the file is larger than ${fileBytes} bytes (the file_bytes quota)`);
    if (total > deployBytes)
      throw quota(raw, `the deploy is larger than ${deployBytes} bytes (the deploy_bytes quota)`);
    if (total > storageLeft) throw quota(raw, `the project's storage has ${storageLeft} bytes left`);
  }

  /** Each folder above `key` (and `key` itself for a directory entry) must not be a file. */
  private reserveFolders(raw: string, key: string, path: string, itself: boolean): void {
    const keys = key.split("/");
    const names = path.split("/");
    for (let depth = 1; depth <= keys.length - (itself ? 0 : 1); depth++) {
      const folderKey = keys.slice(0, depth).join("/");
      const file = this.filePaths.get(folderKey);
      if (file !== undefined) throw duplicate(raw, `its folder ${file} is a file`);
      if (!this.folderPaths.has(folderKey)) this.folderPaths.set(folderKey, names.slice(0, depth).join("/"));
    }
  }
}

const quota = (raw: string, message: string) => new UploadRefused(shownPath(raw), "quota", message);
const duplicate = (raw: string, message: string) => new UploadRefused(shownPath(raw), "duplicate", message);
