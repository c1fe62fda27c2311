/** The output: one value for where a command reads and writes, and the one table of its top folders. */
export { outputAt, type Output } from './output.js';
export { FOLDER_NAMES, FOLDERS, folderOf, type FolderName, type FolderUse } from './folders.js';
