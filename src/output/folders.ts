/**
 * The output's top folders, declared once: their names, and what each is to the store (store/layout.ts reads
 * this table for its parts, views and private folders). A stage names a folder through the output object
 * (output.ts: `output.lake`, `output.state('writeback')`, `output.reports`), never by spelling it.
 */

/** How the store keeps a top folder: committed (later runs depend on it) or a view (derived, read by name). */
export interface FolderUse {
  /** Derived, read by name by BI tools and people: published under its own name once its data is committed. */
  readonly view: boolean;
  /** Personal data or state: files 0600 in 0700 folders, as the local output keeps them. */
  readonly private: boolean;
}

export const FOLDERS = {
  /** The landed data, Parquet in Hive folders (src/lake). */
  lake: { view: false, private: true },
  /** Each stream's and stage's state: cursors, watermarks, the build's record, the write-back's journal. */
  state: { view: false, private: true },
  /** One manifest per run. */
  runs: { view: false, private: false },
  /** The close records and the figures a close froze. */
  closes: { view: false, private: true },
  /** Records the extract set aside. */
  quarantine: { view: false, private: true },
  /** The users command's audit log. */
  audit: { view: false, private: true },
  /** The warehouse in pieces, for a store's working copy (transform/warehouse/seed.ts). */
  seed: { view: false, private: true },
  /** The marts, exported for BI. */
  marts: { view: true, private: false },
  /** The rendered reports. */
  reports: { view: true, private: false },
  /** The models' dictionary and lineage picture. */
  docs: { view: true, private: false },
} as const satisfies Record<string, FolderUse>;

export type FolderName = keyof typeof FOLDERS;

export const FOLDER_NAMES = Object.keys(FOLDERS) as FolderName[];

/** The top folder of a path inside the output (`lake/orders/…` → `lake`), if it is one of FOLDERS. */
export function folderOf(path: string): FolderName | undefined {
  const top = path.split('/')[0];
  return Object.hasOwn(FOLDERS, top) ? (top as FolderName) : undefined;
}
