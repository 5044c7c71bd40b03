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

#[allow(unused_variables)]
impl crate::Store for SqliteStore {
    fn append(&self, batch: &[gapless_core::NewEvent], received_at: gapless_core::Instant) -> Result<crate::Appended> { todo!() }
    fn coverage(&self, asset: &str, range: gapless_core::Interval) -> Result<gapless_core::IntervalSet> { todo!() }
    fn run_containing(&self, asset: &str, t: gapless_core::Instant) -> Result<Option<gapless_core::Interval>> { todo!() }
    fn events(&self, asset: &str, query: &crate::EventQuery) -> Result<crate::EventPage> { todo!() }
    fn events_overlapping(&self, asset: &str, range: gapless_core::Interval) -> Result<Vec<crate::StoredEvent>> { todo!() }
    fn asset_decl(&self, asset: &str) -> Result<Option<gapless_core::AssetDecl>> { todo!() }
    fn declare_asset(&self, asset: &str, decl: &gapless_core::AssetDecl) -> Result<()> { todo!() }
    fn assets(&self) -> Result<Vec<crate::AssetSummary>> { todo!() }
}
