//! The embedded SQLite backend.
// STUB: implemented by the storage work (issue 3).

use std::path::Path;

use crate::Result;

/// A ledger in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {}

impl SqliteStore {
    /// Open or create the ledger at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore> {
        let _ = path.as_ref();
        todo!()
    }
}
